"""Scores of the evaluation README, as pure functions (shared by ``vision eval detection`` and ``ocr``).

Definitions (``../shared/data/README.md``, "How scores are defined"):

- boxes are axis-aligned (polygons reduced to their hull boxes);
- detection: one-to-one greedy matching in decreasing IoU, a pair counts at IoU >= threshold; P/R/F1 are
  micro-averaged over a set (sum the :class:`Counts` of its pages);
- end-to-end: the same matching, a matched pair counts only when the texts are equal case-insensitively;
- ``ignore`` ground truth counts for nothing, and predictions lying >= 50% of their area on ignore regions
  are dropped before scoring;
- line-level ground truth is split into word boxes with widths proportional to character counts;
- page CER: Levenshtein distance between reading-order texts / ground-truth length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from vision.ops.boxes import box_area, box_iou, row_order

__all__ = [
    "Counts",
    "greedy_match",
    "split_line",
    "ground_truth_words",
    "drop_ignored",
    "detection_counts",
    "end_to_end_counts",
    "reading_order_text",
    "cer_counts",
    "edit_counts",
    "IGNORE_COVER",
]

IGNORE_COVER = 0.5  # README: predictions lying >= 50% of their area on ignore regions are dropped


@dataclass(frozen=True)
class Counts:
    """Matched pairs, predictions and ground-truth items; add them up over a set (micro-average)."""

    tp: int = 0
    n_pred: int = 0
    n_gt: int = 0

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.tp + other.tp, self.n_pred + other.n_pred, self.n_gt + other.n_gt)

    @property
    def precision(self) -> float:
        return self.tp / self.n_pred if self.n_pred else (1.0 if not self.n_gt else 0.0)

    @property
    def recall(self) -> float:
        return self.tp / self.n_gt if self.n_gt else (1.0 if not self.n_pred else 0.0)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def summary(self) -> dict[str, float | int]:
        """``{"precision", "recall", "f1"}`` rounded to 4 places, with the raw ``tp``, ``n_pred``, ``n_gt``."""
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "tp": self.tp,
            "n_pred": self.n_pred,
            "n_gt": self.n_gt,
        }


def greedy_match(gt: np.ndarray, pred: np.ndarray, iou_threshold: float) -> list[tuple[int, int]]:
    """One-to-one pairs ``(gt index, pred index)`` taken in decreasing IoU while IoU >= ``iou_threshold``.

    Args:
        gt: ``float[N, 4]`` ground-truth boxes; pred: ``float[M, 4]`` predicted boxes (same units).
    Ties are broken by ground-truth index, then prediction index (a stable sort), so results are
    deterministic.
    """
    if len(gt) == 0 or len(pred) == 0:
        return []
    iou = box_iou(gt, pred)
    gi, pj = np.nonzero(iou >= iou_threshold)
    order = np.argsort(-iou[gi, pj], kind="stable")
    used_g, used_p, pairs = set(), set(), []
    for k in order:
        g, p = int(gi[k]), int(pj[k])
        if g not in used_g and p not in used_p:
            used_g.add(g)
            used_p.add(p)
            pairs.append((g, p))
    return pairs


def split_line(text: str, box: Sequence[float]) -> list[tuple[str, np.ndarray]]:
    """Split a line into word boxes whose widths are proportional to character counts.

    Every character, spaces included, gets ``width / len(text)``; words are the runs of non-space
    characters and keep the line's full height. Returns ``[(word, float64[4])]`` (none for blank text).
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    if not text:
        return []
    step = (x1 - x0) / len(text)
    words, start = [], None
    for i, ch in enumerate(text + " "):
        if not ch.isspace() and start is None:
            start = i
        elif ch.isspace() and start is not None:
            words.append((text[start:i], np.array([x0 + start * step, y0, x0 + i * step, y1])))
            start = None
    return words


def ground_truth_words(words: Sequence, level: str = "word") -> tuple[np.ndarray, list[str], np.ndarray]:
    """Scoring boxes from ground-truth items (anything with ``text``, ``polygon`` and ``ignore``).

    Returns ``(boxes float64[N, 4], texts, ignore_boxes float64[K, 4])``: word boxes (line items split by
    :func:`split_line` when ``level == "line"``) and the ignore regions, in the items' units.
    """
    boxes, texts, ignore = [], [], []
    for w in words:
        poly = np.asarray(w.polygon, dtype=np.float64).reshape(-1, 2)
        box = np.concatenate([poly.min(axis=0), poly.max(axis=0)])
        if w.ignore:
            ignore.append(box)
        elif level == "line":
            for t, b in split_line(w.text, box):
                texts.append(t)
                boxes.append(b)
        else:
            texts.append(w.text)
            boxes.append(box)
    as_array = lambda b: np.asarray(b, dtype=np.float64).reshape(-1, 4)  # noqa: E731
    return as_array(boxes), texts, as_array(ignore)


def _union_area(rects: np.ndarray) -> float:
    """Exact area of the union of ``rects (float[K, 4])`` by coordinate compression."""
    if len(rects) == 0:
        return 0.0
    xs, ys = np.unique(rects[:, 0::2]), np.unique(rects[:, 1::2])
    cx, cy = (xs[:-1] + xs[1:]) / 2, (ys[:-1] + ys[1:]) / 2
    inside = (
        (rects[:, None, None, 0] <= cx[None, None, :])
        & (cx[None, None, :] <= rects[:, None, None, 2])
        & (rects[:, None, None, 1] <= cy[None, :, None])
        & (cy[None, :, None] <= rects[:, None, None, 3])
    )
    covered = inside.any(axis=0)
    return float((covered * np.outer(np.diff(ys), np.diff(xs))).sum())


def drop_ignored(pred: np.ndarray, ignore: np.ndarray, cover: float = IGNORE_COVER) -> np.ndarray:
    """Boolean ``keep[M]``: False for predictions with >= ``cover`` of their area on ignore regions."""
    pred = np.asarray(pred, dtype=np.float64).reshape(-1, 4)
    keep = np.ones(len(pred), dtype=bool)
    if len(ignore) == 0:
        return keep
    areas = box_area(pred)
    for i, b in enumerate(pred):
        clipped = np.concatenate([np.maximum(ignore[:, :2], b[:2]), np.minimum(ignore[:, 2:], b[2:])], axis=1)
        clipped = clipped[(clipped[:, 2] > clipped[:, 0]) & (clipped[:, 3] > clipped[:, 1])]
        if areas[i] > 0 and len(clipped) and _union_area(clipped) >= cover * areas[i]:
            keep[i] = False
    return keep


def detection_counts(
    gt: np.ndarray, pred: np.ndarray, iou_threshold: float = 0.5, ignore: np.ndarray | None = None
) -> Counts:
    """Detection counts of one page: ``gt float[N, 4]``, ``pred float[M, 4]``, ``ignore float[K, 4]``."""
    pred = np.asarray(pred, dtype=np.float64).reshape(-1, 4)
    if ignore is not None and len(ignore):
        pred = pred[drop_ignored(pred, ignore)]
    return Counts(len(greedy_match(gt, pred, iou_threshold)), len(pred), len(gt))


def end_to_end_counts(
    gt: np.ndarray,
    gt_texts: Sequence[str],
    pred: np.ndarray,
    pred_texts: Sequence[str],
    iou_threshold: float = 0.5,
    ignore: np.ndarray | None = None,
) -> Counts:
    """End-to-end counts: the detection matching; a pair counts when texts are equal ignoring case."""
    pred = np.asarray(pred, dtype=np.float64).reshape(-1, 4)
    texts = list(pred_texts)
    if ignore is not None and len(ignore):
        keep = drop_ignored(pred, ignore)
        pred, texts = pred[keep], [t for t, k in zip(texts, keep) if k]
    pairs = greedy_match(gt, pred, iou_threshold)
    tp = sum(gt_texts[g].casefold() == texts[p].casefold() for g, p in pairs)
    return Counts(tp, len(pred), len(gt))


def reading_order_text(boxes: np.ndarray, texts: Sequence[str]) -> str:
    """Words joined in reading order by single spaces.

    Words are taken by vertical centre; a word joins the current row when its vertical overlap with the
    row's first word is at least half the smaller of the two heights, else it opens a new row. Rows go
    top to bottom, words left to right within a row.
    """
    words = [texts[i] for i in row_order(boxes)]
    return " ".join(" ".join(w.split()) for w in words if w.strip())


def cer_counts(gt_text: str, pred_text: str) -> tuple[int, int]:
    """``(Levenshtein distance, ground-truth length)``; sum both over a set for its CER."""
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(gt_text, pred_text), len(gt_text)


def edit_counts(gt_text: str, pred_text: str) -> dict[str, int]:
    """The page CER's errors by kind: characters of the truth the reading lacks (``missing``), characters it
    adds (``extra``) and characters it reads wrong (``wrong``), over one minimal alignment, so they sum to
    :func:`cer_counts`' distance. Text never found shows as missing, invented text as extra."""
    from rapidfuzz.distance import Levenshtein

    ops = Levenshtein.editops(gt_text, pred_text)
    kinds = {"delete": 0, "insert": 0, "replace": 0}
    for op in ops:
        kinds[op.tag] += 1
    return {"missing": kinds["delete"], "extra": kinds["insert"], "wrong": kinds["replace"]}
