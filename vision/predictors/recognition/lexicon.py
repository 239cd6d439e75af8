"""Lexicon-aware CTC decoding: replace a misread word by a nearby dictionary word when the model itself finds
that word about as likely.

Greedy CTC decoding reads each frame on its own, so one blurred glyph turns "Product" into "Praduct". For a
token that is not in the lexicon, dictionary words within a small edit distance are scored with the CTC
likelihood of the crop's own frames (``-log p(word | frames)``, summed over alignments); the best one replaces
the reading if it is no more than ``prior`` times less likely than the reading itself, a dictionary prior
fixed before any measurement (10). Tokens in the lexicon, short tokens, and tokens with digits or inner
punctuation are left alone, so names, codes and numbers read as before unless the model's own evidence for
a dictionary word is close.

The bundled English lexicon (``lexicons/en.txt.gz``, 74,960 lower-case words) is the union of Debian's
``wamerican`` and ``wbritish`` lists (SCOWL; permissive licence), alphabetic ASCII entries only.
"""

from __future__ import annotations

import gzip
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from vision.models.recognition.vocab import encode

__all__ = ["Lexicon", "build_lexicon_file", "ctc_nll", "load_lexicon"]

_BUNDLED = Path(__file__).with_name("lexicons")
_TOKEN = re.compile(r"^(\W*)([^\W\d_]+)(\W*)$")  # edge punctuation, letters only, edge punctuation
_BINS = 27  # a-z, then every other character in one bin
_POPCOUNT16 = np.unpackbits(  # set bits of every 16-bit value
    np.arange(1 << 16, dtype=">u2").view(np.uint8)).reshape(-1, 16).sum(1, dtype=np.uint8)


class _Pool(NamedTuple):
    """Candidate words of similar length with the per-word letter masks and counts of the prefilter."""

    words: list[str]
    masks: np.ndarray  # [n] uint32: bit b set when the word has a letter of bin b
    counts: np.ndarray  # [n, _BINS] uint8: letters per bin


def _profile(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Letter masks ``[n]`` uint32 (bit ``b`` set when a word has a letter of bin ``b``) and letter counts
    ``[n, _BINS]`` uint8 (capped at 255, for query and pool alike) of ``words``, vectorised: pools hold
    tens of thousands."""
    codes = np.frombuffer("".join(words).encode("utf-32-le"), np.uint32).astype(np.int64)
    bins = np.where((codes >= 97) & (codes <= 122), codes - 97, _BINS - 1)
    rows = np.repeat(np.arange(len(words)), [len(w) for w in words])
    counts = np.bincount(rows * _BINS + bins, minlength=len(words) * _BINS).reshape(len(words), _BINS)
    masks = ((counts > 0) * (1 << np.arange(_BINS, dtype=np.int64))).sum(1).astype(np.uint32)
    return masks, np.minimum(counts, 255).astype(np.uint8)


def _popcount(x: np.ndarray) -> np.ndarray:
    """Set bits per element of a uint32 array (numpy < 2 has no ``bitwise_count``)."""
    return _POPCOUNT16[x & 0xFFFF] + _POPCOUNT16[x >> 16]


class Lexicon:
    """A set of lower-case words with an edit-distance candidate search grouped by word length.

    Args:
        words: the dictionary (any case; stored lower-case).
        prior: how much more likely a dictionary word is a priori than an unknown string.
        min_length: shortest token (letters only) that may be corrected.
    """

    def __init__(self, words: set[str] | list[str], *, prior: float = 10.0, min_length: int = 4) -> None:
        self.words = {w.lower() for w in words if w}
        self.log_prior = math.log(prior)
        self.min_length = min_length
        self._by_length: dict[int, list[str]] = {}
        self._pools: dict[tuple[int, int], _Pool] = {}
        self._seen: dict[tuple[str, int], list[str]] = {}
        for w in sorted(self.words):  # sorted: candidates and their ties never depend on set order
            self._by_length.setdefault(len(w), []).append(w)

    def __contains__(self, word: str) -> bool:
        return word.lower() in self.words

    def __len__(self) -> int:
        return len(self.words)

    def max_distance(self, length: int) -> int:
        """Edits allowed for a token of ``length`` letters: 1 up to 6 letters, 2 beyond."""
        return 1 if length <= 6 else 2

    def candidates(self, token: str, limit: int = 8) -> list[str]:
        """Dictionary words (lower-case) within :meth:`max_distance` edits of ``token``, closest first
        (remembered: forms repeat the same unknown tokens page after page)."""
        low = token.lower()
        if (low, limit) in self._seen:
            return self._seen[(low, limit)]
        d = self.max_distance(len(low))
        pool = self._pool(len(low), d)
        # Cheap lower bounds on the edit distance drop most of the pool before the exact one: an edit changes
        # at most 2 letters of the set of letters a word uses, and the letter counts by at most 2 in all.
        mask, counts = _profile([low])
        near = np.flatnonzero(_popcount(pool.masks ^ mask[0]) <= 2 * d)
        near = near[np.abs(pool.counts[near].astype(np.int16) - counts.astype(np.int16)).sum(1) <= 2 * d]
        words = [pool.words[i] for i in near]
        dist = process.cdist([low], words, scorer=Levenshtein.distance, score_cutoff=d, dtype=np.int32)[0]
        keep = np.flatnonzero(dist <= d)
        keep = keep[np.argsort(dist[keep], kind="stable")][:limit]  # closest first, ties in word order
        if len(self._seen) >= 65536:
            self._seen.clear()
        self._seen[(low, limit)] = [words[i] for i in keep]
        return self._seen[(low, limit)]

    def _pool(self, length: int, d: int) -> _Pool:
        """Words whose length is within ``d`` of ``length``, with their letter masks and counts (built once
        per pair)."""
        key = (length, d)
        if key not in self._pools:
            words = [w for n in range(length - d, length + d + 1) for w in self._by_length.get(n, ())]
            self._pools[key] = _Pool(words, *_profile(words))
        return self._pools[key]

    def needs_check(self, text: str) -> bool:
        """Whether ``text`` is a letters-only token (edge punctuation aside), long enough and not a known word."""
        m = _TOKEN.match(text)
        return bool(m) and len(m.group(2)) >= self.min_length and m.group(2).lower() not in self.words

    def correct(self, text: str, log_probs: torch.Tensor) -> str:
        """``text`` (greedy reading of ``log_probs``, ``[T, C]`` log-softmax frames) or a dictionary word in
        its place, with the reading's edge punctuation and case pattern."""
        m = _TOKEN.match(text)
        if not m or not self.needs_check(text):
            return text
        head, core, tail = m.groups()
        options = [head + _like(core, w) + tail for w in self.candidates(core)]
        if not options:
            return text
        nll = ctc_nll(log_probs, [text, *options])
        best = int(torch.argmin(nll[1:])) + 1
        return options[best - 1] if nll[best] <= nll[0] + self.log_prior else text


def ctc_nll(log_probs: torch.Tensor, texts: list[str]) -> torch.Tensor:
    """``-log p(text | frames)`` for each text under the CTC model (``log_probs``: ``[T, C]``, blank 0)."""
    t = log_probs.shape[0]
    targets = [torch.as_tensor(encode(s), dtype=torch.long) for s in texts]
    lengths = torch.tensor([len(x) for x in targets], dtype=torch.long)
    lp = log_probs.float().cpu()[:, None, :].expand(t, len(texts), log_probs.shape[-1])
    return F.ctc_loss(lp, torch.cat(targets), torch.full((len(texts),), t, dtype=torch.long), lengths,
                      blank=0, reduction="none", zero_infinity=False)


def _like(pattern: str, word: str) -> str:
    """``word`` in the case pattern of ``pattern`` (all caps, capitalised, or lower case)."""
    if pattern.isupper():
        return word.upper()
    if pattern[:1].isupper():
        return word.capitalize()
    return word


@lru_cache(maxsize=4)
def load_lexicon(name_or_path: str = "en", prior: float = 10.0) -> Lexicon:
    """A bundled lexicon by name (``"en"``) or a word-per-line text file (``.gz`` allowed)."""
    path = Path(name_or_path)
    if not path.exists():
        path = _BUNDLED / f"{name_or_path}.txt.gz"
        if not path.exists():
            raise ValueError(f"unknown lexicon {name_or_path!r}: not a file nor one of "
                             f"{sorted(p.name.split('.')[0] for p in _BUNDLED.glob('*.txt.gz'))}")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return Lexicon({line.strip() for line in f if line.strip()}, prior=prior)


def build_lexicon_file(sources: list[Path | str], dst: Path | str, *, cap: int = 120_000) -> int:
    """Write a bundled lexicon (``dst``, gzipped, one lower-case word per line) from word lists.

    Debian's lists carry no frequencies, so the cap keeps the first sources' words first (hunspell stems
    before their expanded forms) and, within a source, shorter words first (short words are the frequent
    ones). Only alphabetic words of 2-20 letters are kept. Returns the number of words written."""
    seen: set[str] = set()
    for src in sources:
        opener = gzip.open if str(src).endswith(".gz") else open
        with opener(src, "rt", encoding="utf-8", errors="ignore") as f:
            words = {w.strip().lower() for w in f}
        ranked = sorted((w for w in words if w.isalpha() and 2 <= len(w) <= 20 and w not in seen),
                        key=lambda w: (len(w), w))
        seen.update(ranked[:max(0, cap - len(seen))])
        if len(seen) >= cap:
            break
    with gzip.open(dst, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write("\n".join(sorted(seen)) + "\n")
    return len(seen)

