"""``lang``: language codes, their lexicons, and the predictors that take them."""

from __future__ import annotations

import pytest

from vision.predictors.recognition.languages import LANGUAGES, lexicon_for, parse_lang, recognizer_for
from vision.predictors.recognition.lexicon import load_lexicon


def test_parse_lang() -> None:
    assert parse_lang(None) == () and parse_lang("") == ()
    assert parse_lang("de") == ("de",)
    assert parse_lang("fr+de") == parse_lang("deu+fra") == parse_lang("DE + fr") == ("de", "fr")
    with pytest.raises(ValueError, match="Cyrillic"):
        parse_lang("ru")
    with pytest.raises(ValueError, match="Greek"):
        parse_lang("de+el")
    with pytest.raises(ValueError, match="unknown lang"):
        parse_lang("xx")


@pytest.mark.parametrize("code", sorted(LANGUAGES))
def test_every_language_has_a_bundled_lexicon(code: str) -> None:
    lex = load_lexicon(code)
    assert 50_000 <= len(lex) <= 100_000 or code == "en"
    assert all(w == w.lower() for w in list(lex.words)[:1000])


def test_lexicons_know_their_accented_words() -> None:
    assert {"größe", "über"} <= lexicon_for("de").words
    assert {"été", "français"} <= lexicon_for("fr").words
    assert "příliš" in lexicon_for("cs").words and "ktorý" in lexicon_for("sk").words
    both = lexicon_for("de+fr")
    assert {"größe", "été"} <= both.words and "größe" not in lexicon_for(None).words
    assert recognizer_for("de") is None and recognizer_for("de", "crnn_transformer_small") == "crnn_transformer_small"


def test_lexicon_corrects_an_accented_misreading() -> None:
    """A German word read without its umlaut is replaced by the dictionary word when the frames allow it; the
    English lexicon (the default) leaves it alone."""
    import torch

    from vision.models.recognition.vocab import CHAR_TO_INDEX, NUM_CLASSES

    word, misread = "Prüfung", "Prufung"
    frames = torch.full((2 * len(word) + 1, NUM_CLASSES), -9.0)
    for i, (a, b) in enumerate(zip(word, misread)):
        frames[2 * i + 1, CHAR_TO_INDEX[b]] = 0.0  # the greedy path reads the misreading...
        if a != b:
            frames[2 * i + 1, CHAR_TO_INDEX[a]] = -0.5  # ...with the umlaut a close second
    frames[0::2, 0] = 0.0
    lp = torch.log_softmax(frames, dim=1)
    assert lexicon_for("de").correct(misread, lp) == word
    assert lexicon_for(None).correct(misread, lp) == misread
