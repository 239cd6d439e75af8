"""Lexicon-aware decoding: dictionary words replace misreadings only when the frames support them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from vision.predictors.recognition.lexicon import Lexicon, ctc_nll, load_lexicon
from vision.predictors.recognition.predictor import recognition_predictor
from vision.models.recognition.vocab import CHAR_TO_INDEX, NUM_CLASSES


def _frames(spec: list[dict[str, float]]) -> torch.Tensor:
    """``[T, C]`` log-probabilities: each frame's listed characters get their probability, the rest share
    what is left (blank included)."""
    out = torch.empty(len(spec), NUM_CLASSES)
    for t, probs in enumerate(spec):
        rest = (1.0 - sum(probs.values())) / (NUM_CLASSES - len(probs))
        out[t] = rest
        for ch, p in probs.items():
            out[t, 0 if ch == "" else CHAR_TO_INDEX[ch]] = p
    return out.log()


def _word(text: str, doubt: dict[int, dict[str, float]] | None = None) -> list[dict[str, float]]:
    """Frames spelling ``text`` with a blank between characters; ``doubt`` overrides some characters."""
    spec: list[dict[str, float]] = [{"": 0.98}]
    for i, ch in enumerate(text):
        spec += [(doubt or {}).get(i, {ch: 0.98}), {"": 0.98}]
    return spec


LEX = Lexicon(["product", "produce", "request", "moisture", "the"])


def test_close_call_goes_to_the_dictionary_word() -> None:
    frames = _frames(_word("Praduct", {2: {"a": 0.55, "o": 0.43}}))
    assert LEX.correct("Praduct", frames) == "Product"


def test_clear_evidence_keeps_the_reading() -> None:
    frames = _frames(_word("Praduct", {2: {"a": 0.995, "o": 0.001}}))
    assert LEX.correct("Praduct", frames) == "Praduct"


def test_case_and_edge_punctuation_follow_the_reading() -> None:
    frames = _frames(_word("(ROQUEST:", {2: {"O": 0.5, "E": 0.48}}))
    assert LEX.correct("(ROQUEST:", frames) == "(REQUEST:"


@pytest.mark.parametrize("text", ["Product", "A1B2", "Pra-duct", "Thw", "12345", ""])
def test_known_short_or_non_alphabetic_tokens_are_left_alone(text: str) -> None:
    assert not LEX.needs_check(text)
    assert LEX.correct(text, _frames(_word(text or "x"))) == text


def test_candidates_respect_edit_distance_by_length() -> None:
    assert LEX.max_distance(5) == 1 and LEX.max_distance(7) == 2
    assert LEX.candidates("Prodact") == ["product", "produce"]  # 1 and 2 edits, closest first
    assert LEX.candidates("Pradact") == ["product"]
    assert LEX.candidates("xyzzyq") == []


def _brute_candidates(lex: Lexicon, token: str, limit: int = 8) -> list[str]:
    """The exact search the prefilter must reproduce: edit distance to every word of similar length."""
    from rapidfuzz.distance import Levenshtein

    low = token.lower()
    d = lex.max_distance(len(low))
    pool = [w for w in sorted(lex.words) if abs(len(w) - len(low)) <= d]
    scored = [(Levenshtein.distance(low, w), n, w) for n, w in enumerate(sorted(pool, key=len))]
    return [w for dist, _, w in sorted(x for x in scored if x[0] <= d)][:limit]


@pytest.mark.parametrize("seed", [0, 1])
def test_prefiltered_candidates_equal_the_exact_search(seed: int) -> None:
    """The letter-set and letter-count bounds only skip words that are too far: same candidates, same order,
    as scoring the whole pool, on typos of dictionary words (accented and non-letter characters included)."""
    rng = np.random.default_rng(seed)
    base = load_lexicon("en")
    words = sorted(base.words)[::7] + ["café", "straße", "naïve-ish", "x" * 300]
    lex = Lexicon(words)
    alphabet = list("abcdefghijklmnopqrstuvwxyzéåöß-'")
    checked = 0
    for _ in range(300):
        w = list(words[rng.integers(len(words))])
        for _ in range(int(rng.integers(1, 4))):
            i, op = int(rng.integers(len(w) + 1)), rng.random()
            if op < 0.4 and i < len(w):
                w[i] = str(rng.choice(alphabet))
            elif op < 0.7:
                w.insert(i, str(rng.choice(alphabet)))
            elif i < len(w):
                del w[i]
        token = "".join(w)
        if len(token) >= 4:
            assert lex.candidates(token) == _brute_candidates(lex, token), token
            checked += 1
    assert checked > 200
    assert lex.candidates("x" * 299) == ["x" * 300]


def test_ctc_nll_matches_the_alignment_sum() -> None:
    """Two frames, text "a": alignments a-, -a, aa."""
    probs = torch.full((2, NUM_CLASSES), 0.0)
    probs[:, 0], probs[:, CHAR_TO_INDEX["a"]], probs[:, CHAR_TO_INDEX["b"]] = 0.3, 0.5, 0.2
    nll = ctc_nll(probs.log(), ["a", "b"])
    assert nll[0].item() == pytest.approx(-math.log(0.5 * 0.3 + 0.3 * 0.5 + 0.5 * 0.5), rel=1e-5)
    assert nll[1].item() == pytest.approx(-math.log(0.2 * 0.3 + 0.3 * 0.2 + 0.2 * 0.2), rel=1e-5)


def test_bundled_lexicon_and_errors() -> None:
    en = load_lexicon("en")
    assert len(en) > 50_000 and "product" in en and "Request" in en
    with pytest.raises(ValueError, match="unknown lexicon"):
        load_lexicon("klingon")


def test_predictor_accepts_a_lexicon_and_none(tmp_path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("alpha\nbravo\n")
    crops = [np.full((32, 80, 3), 255, np.uint8)]
    with_lex = recognition_predictor(weights=None, device="cpu", onnx=False, lexicon=str(words))
    plain = recognition_predictor(weights=None, device="cpu", onnx=False, lexicon=None)
    assert with_lex.lexicon is not None and "bravo" in with_lex.lexicon and plain.lexicon is None
    assert len(with_lex(crops)) == len(plain(crops)) == 1
