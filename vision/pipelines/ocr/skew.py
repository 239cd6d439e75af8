"""Skew of a straight-box page from the directions of its detected words, for the layout.

A phone photo of a receipt or a slightly turned scan is read with axis-aligned word boxes (the default,
``assume_straight_pages=True``), and the layout groups words into lines by vertical overlap. A line tilted by
a few degrees drifts by more than its height across the page, so an item and its price, or the two halves
of a row, fall into different lines and the exported text comes out of order. The detector's regions keep
each word's direction (:func:`vision.ops.db_postprocess.kernel_angle`); :func:`page_skew` turns them into
one angle for the page when they agree, and the layout then groups the boxes turned level
(:func:`~vision.pipelines.ocr.orientation.deskew_boxes`). The words keep their measured boxes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SkewOptions", "page_skew"]


@dataclass(frozen=True)
class SkewOptions:
    """When a page's word directions make a skew.

    Attributes:
        min_words: least number of words with a direction (regions at least twice as long as high).
        min_angle: smaller skews are taken as level (the layout's line linking follows them already).
        tolerance: degrees around the median direction that count as agreeing with it.
        min_agreement: least share of the words' weight (their widths) agreeing with the median.
    """

    min_words: int = 8
    min_angle: float = 1.0
    tolerance: float = 2.0
    min_agreement: float = 0.6


def page_skew(angles: np.ndarray | None, boxes: np.ndarray, options: SkewOptions = SkewOptions()) -> float:
    """Skew in degrees (positive: text runs down to the right) of a page, or 0.0 when it is level or its
    words do not agree on a direction (scene photos with text at many angles).

    The skew is the median of the words' directions weighted by their box widths (long words fix a line
    better than short ones); it stands when at least ``min_words`` words have a direction, at least
    ``min_agreement`` of their weight lies within ``tolerance`` degrees of it, and it is at least
    ``min_angle``.

    Args:
        angles: ``float[N]`` word directions in degrees, NaN where a word has none; ``None``: no directions.
        boxes: ``float[N, 4]`` the words' boxes (any unit, both axes alike).
    """
    if angles is None:
        return 0.0
    a = np.asarray(angles, dtype=np.float64).reshape(-1)
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if len(a) != len(b):
        return 0.0
    known = np.isfinite(a)
    if known.sum() < options.min_words:
        return 0.0
    a, weight = a[known], np.maximum(b[known, 2] - b[known, 0], 1e-9)
    order = np.argsort(a)
    cum = np.cumsum(weight[order])
    median = float(a[order][np.searchsorted(cum, cum[-1] / 2)])
    agreeing = weight[np.abs(a - median) <= options.tolerance].sum() / weight.sum()
    if abs(median) < options.min_angle or agreeing < options.min_agreement:
        return 0.0
    return median
