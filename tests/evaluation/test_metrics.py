"""The evaluation README's score definitions on hand-made cases."""

from types import SimpleNamespace

import numpy as np
import pytest

from vision.evaluation.metrics import (
    Counts,
    cer_counts,
    detection_counts,
    drop_ignored,
    edit_counts,
    end_to_end_counts,
    greedy_match,
    ground_truth_words,
    reading_order_text,
    split_line,
)


def test_greedy_match_takes_highest_iou_first_and_one_to_one():
    gt = np.array([[0, 0, 10, 10], [8, 0, 18, 10]], float)
    pred = np.array([[1, 0, 11, 10], [9, 0, 19, 10], [0, 0, 10, 10]], float)
    pairs = greedy_match(gt, pred, 0.5)
    assert sorted(pairs) == [(0, 2), (1, 1)]  # the exact box wins gt 0; pred 0 is left unmatched
    assert greedy_match(gt, pred[:0], 0.5) == []


def test_threshold_is_inclusive():
    gt = np.array([[0, 0, 10, 10]], float)
    pred = np.array([[0, 0, 20, 10]], float)  # IoU exactly 0.5
    assert detection_counts(gt, pred, 0.5) == Counts(1, 1, 1)
    assert detection_counts(gt, pred, 0.51) == Counts(0, 1, 1)


def test_counts_micro_average():
    total = Counts(3, 4, 6) + Counts(1, 4, 2)
    assert (total.tp, total.n_pred, total.n_gt) == (4, 8, 8)
    assert total.precision == 0.5 and total.recall == 0.5 and total.f1 == 0.5
    assert Counts().f1 == 1.0  # nothing to find and nothing found: a perfect page
    assert Counts(0, 3, 0).precision == 0.0 and Counts(0, 0, 2).recall == 0.0


def test_split_line_proportional_to_characters():
    words = split_line("AB CD", [0, 0, 50, 10])
    assert [w for w, _ in words] == ["AB", "CD"]
    np.testing.assert_allclose(words[0][1], [0, 0, 20, 10])
    np.testing.assert_allclose(words[1][1], [30, 0, 50, 10])
    double = split_line("A  B", [0, 0, 40, 10])  # each space is one character
    np.testing.assert_allclose(double[1][1], [30, 0, 40, 10])
    assert split_line("", [0, 0, 1, 1]) == []


def test_ground_truth_words_splits_lines_and_collects_ignore():
    items = [
        SimpleNamespace(text="TOTAL 12.50", polygon=[[0, 0], [110, 0], [110, 10], [0, 10]], ignore=False),
        SimpleNamespace(text="", polygon=[[0, 20], [10, 20], [10, 30], [0, 30]], ignore=True),
    ]
    boxes, texts, ignore = ground_truth_words(items, level="line")
    assert texts == ["TOTAL", "12.50"]
    np.testing.assert_allclose(boxes, [[0, 0, 50, 10], [60, 0, 110, 10]])
    np.testing.assert_allclose(ignore, [[0, 20, 10, 30]])
    boxes_w, texts_w, _ = ground_truth_words(items, level="word")
    assert texts_w == ["TOTAL 12.50"] and len(boxes_w) == 1


def test_predictions_mostly_on_ignore_regions_are_dropped():
    ignore = np.array([[0, 0, 10, 10], [10, 0, 20, 10]], float)
    pred = np.array(
        [
            [5, 0, 15, 10],  # fully on the union of two ignore boxes
            [15, 0, 25, 10],  # exactly half on ignore: dropped (>= 50%)
            [16, 0, 26, 10],  # 40% on ignore: kept
            [30, 0, 40, 10],
        ],
        float,
    )
    assert drop_ignored(pred, ignore).tolist() == [False, False, True, True]
    gt = np.array([[30, 0, 40, 10]], float)
    assert detection_counts(gt, pred, 0.5, ignore) == Counts(1, 2, 1)


def test_end_to_end_counts_only_equal_texts_case_insensitively():
    gt = np.array([[0, 0, 10, 10], [20, 0, 30, 10]], float)
    pred = np.array([[0, 0, 10, 10], [20, 0, 30, 10]], float)
    c = end_to_end_counts(gt, ["Total", "12.50"], pred, ["TOTAL", "12.5O"], 0.5)
    assert c == Counts(1, 2, 2)


def test_reading_order_groups_rows_by_overlap_with_first_word():
    boxes = np.array([[50, 0, 90, 10], [0, 1, 40, 11], [0, 20, 40, 30], [45, 22, 80, 31]], float)
    texts = ["world", "hello", "second", "row"]
    assert reading_order_text(boxes, texts) == "hello world second row"
    assert reading_order_text(np.zeros((0, 4)), []) == ""


def test_cer_counts():
    assert cer_counts("abc", "abd") == (1, 3)
    assert cer_counts("", "") == (0, 0)
    dist, n = cer_counts("hello world", "hello")
    assert (dist, n) == (6, 11) and dist / n == pytest.approx(6 / 11)


@pytest.mark.parametrize(
    ("truth", "read", "expected"),
    [
        ("hello world", "hello", {"missing": 6, "extra": 0, "wrong": 0}),  # a word never found
        ("TOTAL 9.80", "TOTAL 9.80 kkkk", {"missing": 0, "extra": 5, "wrong": 0}),  # invented text
        ("TOTAL", "T0TAL", {"missing": 0, "extra": 0, "wrong": 1}),  # a misread letter
        ("", "", {"missing": 0, "extra": 0, "wrong": 0}),
    ],
)
def test_edit_counts_split_the_page_cer_by_kind(truth, read, expected):
    assert edit_counts(truth, read) == expected


def test_edit_counts_sum_to_the_distance():
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = "".join(rng.choice(list("ab c"), int(rng.integers(0, 12))))
        b = "".join(rng.choice(list("abc d"), int(rng.integers(0, 12))))
        assert sum(edit_counts(a, b).values()) == cer_counts(a, b)[0]
