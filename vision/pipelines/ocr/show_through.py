"""The ``show_through`` stage: drop the faint text of the other side of thin paper (or of the sheet beneath).

Typescripts, carbon copies and old books on thin paper show the text of the next sheet or of the back of the
page as a faint grey copy. A detector finds it and a recognizer turns it into confident nonsense, yet a reader
sees it as no part of the page. Foreground text is the darkest ink of a page; show-through is text at a small
fraction of that contrast, spread over the page.

Per word box, the contrast is the spread of its grey levels (99th minus 1st percentile, so dark-on-light
and light-on-dark text alike). A page's reference is the 90th percentile of its words' contrasts (its
foreground ink, even where faint words outnumber it). Words under ``ratio`` x the reference are dropped,
on pages with at least ``min_words`` words and a reference of at least ``min_contrast`` grey levels, where
they are at least ``min_share`` of the words: a few faint words among dark ones are faded print (the worn
end of a thermal receipt), not show-through. Photos (``PageState.photo``) are left alone: scenes mix every
contrast. ``ShowThroughOptions()`` is the setting chosen on synthetic pages with and without a faint copy of
another page blended in and with bands of faded print, never on evaluation data (``benchmarks/show_through.py``,
``docs/pipeline.md``).

Runs after ``recognize`` (``max_confidence`` can spare confident readings) and before ``sparse``; words from a
PDF text layer are never touched.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.pipelines.base import PageState

__all__ = ["ShowThroughOptions", "ShowThroughStage", "faint_by_contrast", "faint_words", "word_contrast"]


@dataclass(frozen=True)
class ShowThroughOptions:
    """Thresholds of the show-through rule (see the module docstring).

    Attributes:
        ratio: words whose contrast is under this share of the page's reference are show-through; 0 turns
            the rule off.
        min_words: pages with fewer boxes are left alone (too few words to tell foreground ink).
        min_contrast: pages whose reference contrast is lower (grey levels of 255) are left alone.
        min_share: faint words are dropped only where they are at least this share of the page's boxes: a page
            shows through over its area, while a few faint words among dark ones are faded print.
        max_confidence: only faint words the recognizer read with less confidence are dropped (1: any);
            faded print reads as words, show-through (blurred, mirrored, overprinted) mostly does not.
    """

    ratio: float = 0.25
    min_words: int = 8
    min_contrast: float = 60.0
    min_share: float = 0.2
    max_confidence: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.ratio < 1.0:
            raise ValueError(f"ratio must be in [0, 1), got {self.ratio}")
        if not 0.0 <= self.min_share <= 1.0 or not 0.0 <= self.max_confidence <= 1.0:
            raise ValueError("min_share and max_confidence must be in [0, 1]")
        if self.min_words < 1 or self.min_contrast < 0:
            raise ValueError("min_words must be positive and min_contrast non-negative")


def word_contrast(grey: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """``float[N]``: the 99th minus the 1st percentile of the grey levels inside each box of ``boxes``
    (``[N, 4]`` pixel xyxy on ``grey``, ``uint8[H, W]``); 0 for boxes with no pixel inside."""
    h, w = grey.shape[:2]
    edges = np.asarray(boxes, np.float64).reshape(-1, 4)
    lo = np.clip(np.floor(edges[:, :2]), 0, (w, h)).astype(np.int64).tolist()
    hi = np.clip(np.ceil(edges[:, 2:]), 0, (w, h)).astype(np.int64).tolist()
    out = np.zeros(len(edges))
    for i, ((a, c), (b, d)) in enumerate(zip(lo, hi)):
        region = grey[c:d, a:b]
        if region.size:
            out[i] = _spread(np.cumsum(np.bincount(region.ravel(), minlength=256)))
    return out


def _spread(cumulative: np.ndarray) -> float:
    """99th minus 1st percentile (linear interpolation, as ``np.percentile``) of the uint8 values whose
    histogram's cumulative counts are ``cumulative``: the sorted values are read off it, no sort needed."""
    n = int(cumulative[-1]) - 1
    k0, k1 = 0.01 * n, 0.99 * n
    j0, j1 = int(k0), int(k1)
    # the j-th smallest value is the first whose cumulative count exceeds j; interpolated to the next one
    v = cumulative.searchsorted([j0, min(j0 + 1, n), j1, min(j1 + 1, n)], side="right").tolist()
    return (v[2] + (k1 - j1) * (v[3] - v[2])) - (v[0] + (k0 - j0) * (v[1] - v[0]))


def faint_words(grey: np.ndarray, boxes: np.ndarray, options: ShowThroughOptions = ShowThroughOptions(),
                confidences: np.ndarray | None = None) -> np.ndarray:
    """``bool[N]``: which pixel ``boxes`` (``[N, 4]`` xyxy) of the page ``grey``, read with ``confidences``
    (``None``: not read), hold show-through."""
    if options.ratio <= 0 or len(boxes) < options.min_words:
        return np.zeros(len(boxes), dtype=bool)
    return faint_by_contrast(word_contrast(grey, boxes), options, confidences)


def faint_by_contrast(contrast: np.ndarray, options: ShowThroughOptions = ShowThroughOptions(),
                      confidences: np.ndarray | None = None) -> np.ndarray:
    """:func:`faint_words` from the words' contrasts (:func:`word_contrast`)."""
    faint = np.zeros(len(contrast), dtype=bool)
    if options.ratio <= 0 or len(contrast) < options.min_words:
        return faint
    reference = float(np.percentile(contrast, 90))
    if reference < options.min_contrast:
        return faint
    faint = contrast < options.ratio * reference
    if faint.mean() < options.min_share:
        return np.zeros(len(contrast), dtype=bool)
    if confidences is not None and options.max_confidence < 1.0:
        faint &= np.asarray(confidences, np.float64) < options.max_confidence
    return faint


class ShowThroughStage:
    """Pipeline stage dropping the boxes :func:`faint_words` marks on each OCR'd page that is not a photo."""

    def __init__(self, options: ShowThroughOptions = ShowThroughOptions()) -> None:
        self.options = options

    def __call__(self, states: list[PageState]) -> list[PageState]:
        for s in states:
            if not s.needs_ocr or s.photo or s.boxes is None or len(s.boxes) < self.options.min_words:
                continue
            image = s.image
            grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) if image.ndim == 3 else image
            h, w = grey.shape[:2]
            if s.polygons is not None and len(s.polygons) == len(s.boxes):
                pts = np.asarray(s.polygons, np.float64) * [w, h]
                boxes = np.concatenate([pts.min(axis=1), pts.max(axis=1)], axis=1)
            else:
                boxes = np.asarray(s.boxes, np.float64) * [w, h, w, h]
            read = s.texts is not None and len(s.texts) == len(boxes)
            confidences = np.array([c for _, c in s.texts]) if read else None
            faint = faint_words(grey, boxes, self.options, confidences)
            if faint.any():
                s.keep_words(~faint)
        return states
