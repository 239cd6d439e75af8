"""Scores of a video transcript against what the video showed (per-word and per-line visibility).

Definitions (used by ``benchmarks/video_motion.py`` and the tests, so figures compare):

* **word recall**: of the words fully on screen for at least ``min_seconds``, the share found in the
  transcript text, counted as multisets of normalized words (case-folded alphanumerics; words with none
  are left out), so a word shown three times needs three occurrences.
* **word precision**: of the transcript's normalized words, the share matched by a word of the whole truth
  (shown for any time): invented or garbled words lower it.
* **duplicate lines**: transcript lines that repeat an earlier transcript line (rapidfuzz ``ratio`` >= 90
  on normalized text), minus the repeats the true lines have among themselves (forms repeat labels);
  the rate divides by the transcript's line count.
* **timing error**: for each true line shown for at least ``min_seconds`` and found among the timeline
  entries (best ``ratio`` >= 80), the larger of ``|start - first shown|`` and ``|end - last shown end|``.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

__all__ = [
    "TranscriptScore",
    "normalize",
    "repeated_lines",
    "score_transcript",
    "timing_errors",
    "word_precision",
    "word_recall",
]


def normalize(text: str) -> str:
    """Case-folded alphanumerics of ``text`` (spaces kept between words)."""
    return " ".join("".join(ch for ch in word.casefold() if ch.isalnum()) for word in text.split()).strip()


def _words(text: str) -> list[str]:
    return [w for w in normalize(text).split() if w]


def word_recall(shown: Sequence[str], transcript: str) -> tuple[int, int]:
    """``(found, total)``: words of ``shown`` present in ``transcript`` (multiset counts)."""
    truth = Counter(w for text in shown for w in _words(text))
    found = Counter(_words(transcript)) & truth
    return sum(found.values()), sum(truth.values())


def word_precision(truth: Sequence[str], transcript: str) -> tuple[int, int]:
    """``(matched, total)``: transcript words matched by a true word (multiset counts)."""
    said = Counter(_words(transcript))
    matched = said & Counter(w for text in truth for w in _words(text))
    return sum(matched.values()), sum(said.values())


def repeated_lines(lines: Sequence[str], min_ratio: float = 90.0) -> int:
    """How many of ``lines`` repeat an earlier one (``ratio`` >= ``min_ratio`` on normalized text)."""
    seen: list[str] = []
    repeats = 0
    for line in lines:
        text = normalize(line)
        if not text:
            continue
        if any(fuzz.ratio(text, s) >= min_ratio for s in seen):
            repeats += 1
        else:
            seen.append(text)
    return repeats


def timing_errors(
    entries: Sequence[tuple[str, float, float]],
    truth: Sequence[tuple[str, float, float]],
    min_ratio: float = 80.0,
) -> list[float | None]:
    """Per true ``(text, start, end)`` line: the larger start/end error of its best-matching entry
    ``(text, start, end)``, or ``None`` when no entry matches."""
    errors: list[float | None] = []
    normed = [(normalize(t), s, e) for t, s, e in entries]
    for text, start, end in truth:
        key = normalize(text)
        scored = [(fuzz.ratio(key, t), -abs(s - start), s, e) for t, s, e in normed]
        best = max(scored, default=None)
        if best is None or best[0] < min_ratio:
            errors.append(None)
            continue
        errors.append(max(abs(best[2] - start), abs(best[3] - end)))
    return errors


@dataclass(frozen=True)
class TranscriptScore:
    """The figures of one clip (see the module docstring)."""

    words_shown: int
    words_found: int
    transcript_words: int
    transcript_words_true: int
    lines: int
    duplicate_lines: int
    lines_timed: int
    lines_found: int
    timing_errors: tuple[float, ...]

    @property
    def recall(self) -> float:
        return self.words_found / self.words_shown if self.words_shown else 1.0

    @property
    def precision(self) -> float:
        return self.transcript_words_true / self.transcript_words if self.transcript_words else 1.0

    @property
    def duplicate_rate(self) -> float:
        return self.duplicate_lines / self.lines if self.lines else 0.0

    def within(self, seconds: float) -> float:
        """Share of the timed true lines found with an error of at most ``seconds``."""
        ok = sum(e <= seconds for e in self.timing_errors)
        return ok / self.lines_timed if self.lines_timed else 1.0

    @property
    def median_error(self) -> float | None:
        return statistics.median(self.timing_errors) if self.timing_errors else None

    def as_dict(self) -> dict[str, float | int | None]:
        """Flat figures for a benchmark row."""
        return {
            "words_shown": self.words_shown,
            "words_found": self.words_found,
            "recall": round(self.recall, 4),
            "precision": round(self.precision, 4),
            "lines": self.lines,
            "duplicate_lines": self.duplicate_lines,
            "duplicate_rate": round(self.duplicate_rate, 4),
            "lines_timed": self.lines_timed,
            "lines_found": self.lines_found,
            "median_timing_error": None if self.median_error is None else round(self.median_error, 3),
            "within_1s": round(self.within(1.0), 4),
            "within_0_5s": round(self.within(0.5), 4),
        }


def score_transcript(
    transcript_lines: Sequence[str],
    entries: Sequence[tuple[str, float, float]],
    words: Sequence[tuple[str, float]],
    lines: Sequence[tuple[str, float, float, float]] = (),
    *,
    min_seconds: float = 1.0,
) -> TranscriptScore:
    """Score a transcript.

    Args:
        transcript_lines: the text output, one line each.
        entries: timeline entries ``(text, start, end)``.
        words: every true word ``(text, seconds fully on screen)`` (0 for words never wholly shown).
        lines: true lines ``(text, first shown, end of last shown frame, seconds on screen)`` to time.
        min_seconds: words and lines shown at least this long count.
    """
    transcript = "\n".join(transcript_lines)
    found, shown = word_recall([t for t, s in words if s >= min_seconds], transcript)
    matched, said = word_precision([t for t, _ in words], transcript)
    true_repeats = repeated_lines([t for t, *_ in lines]) if lines else 0
    dups = max(0, repeated_lines(transcript_lines) - true_repeats)
    timed = [(t, a, b) for t, a, b, s in lines if s >= min_seconds]
    errors = timing_errors(entries, timed)
    kept = tuple(e for e in errors if e is not None)
    return TranscriptScore(
        shown,
        found,
        said,
        matched,
        len([ln for ln in transcript_lines if ln.strip()]),
        dups,
        len(timed),
        len(kept),
        kept,
    )
