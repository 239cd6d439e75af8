"""Transcript scores (vision.evaluation.transcript) on hand-made transcripts."""

import pytest

from vision.evaluation.transcript import (
    normalize,
    repeated_lines,
    score_transcript,
    timing_errors,
    word_recall,
)


def test_normalize_and_multiset_recall() -> None:
    assert normalize("Date: 9/3/92  R&D") == "date 9392 rd"
    assert word_recall(["the cat", "the dog"], "The cat sat") == (2, 4)  # "the" twice needs two


def test_repeated_lines_are_fuzzy() -> None:
    assert repeated_lines(["Total amount due", "Signature", "Total amount  due.", "Total amount"]) == 1


def test_timing_errors_pick_the_best_match() -> None:
    entries = [("Director Anna Bennett", 1.2, 5.0), ("Music Linda Walker", 2.0, 7.5)]
    truth = [("Director Anna Bennett", 1.0, 5.5), ("Music Linda Walker", 2.1, 7.0), ("Sound", 3.0, 4.0)]
    assert timing_errors(entries, truth) == pytest.approx([0.5, 0.5, None])


def test_score_transcript() -> None:
    words = [("Total", 2.0), ("amount", 2.0), ("due", 0.5), ("Signature", 3.0)]
    lines = [("Total amount due", 0.0, 2.0, 2.0), ("Signature", 1.0, 4.0, 3.0)]
    score = score_transcript(
        ["Total amount", "Signature", "Signature", "Ghost"], [("Signature", 1.0, 4.2)], words, lines
    )
    assert (score.words_found, score.words_shown) == (3, 3) and score.recall == 1.0
    assert score.precision == pytest.approx(3 / 5)  # "Ghost" is invented, the second "Signature" a repeat
    assert score.duplicate_lines == 1 and score.duplicate_rate == pytest.approx(0.25)
    assert (score.lines_timed, score.lines_found) == (2, 1) and score.within(0.5) == pytest.approx(0.5)
