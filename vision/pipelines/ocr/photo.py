"""The ``photo`` stage: tell photos from documents, and read photos with the photo detector.

Photos (street and shop scenes, screens, video frames, text-free pictures) hold little text on a natural
background; documents (scans, rendered pages, table crops, receipts) hold text on paper. The default detector
serves documents; a second one fine-tuned on synthetic scene pages (``db_mobilenet_v3_large_photo``,
``docs/models/detection_photo.md``) reads photos better, and on photos the ``sparse`` rule
(:mod:`vision.pipelines.ocr.sparse`) drops invented lone glyphs. The gate costs dense documents nothing: a
page is a photo only when the default detector found fewer than :attr:`PhotoOptions.max_words` boxes, and
either less than :attr:`PhotoOptions.max_paper` of its thumbnail lies at its dominant grey level (paper, a
screen's or a table's flat background) or more than :attr:`PhotoOptions.min_colour` of it differs in colour
from the page's median (:func:`page_stats`), unless its boxes look typeset (:func:`typeset_shares`: a receipt
or a letter photographed on a table is read as the document it is); only those pages are detected a second
time. The thresholds were chosen on synthetic pages of the detector's generators (scans, faxes, receipts,
clean pages and crops of them against scenes, screens and text-free photos; ``docs/pipeline.md``), never on
the evaluation sets: they call 75% of the synthetic photos photos and 2.9% of the synthetic documents.

A photo that the ``polarity`` stage inverted (a dark median, as most photos of streets and shops have) is read
as taken: the photo detector learned text of both polarities on photographs, and a photo's negative is no
photo it has seen (``benchmarks/photo_pages.py`` measures both on synthetic photos).

Runs right after ``detect`` (before it with ``mode="on"``, so that the photo detector alone reads every
page); words from a PDF text layer are never touched.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import cv2
import numpy as np

from vision.pipelines.base import PageState
from vision.pipelines.ocr.skew import level_boxes, word_quads

__all__ = [
    "PHOTO_DETECTOR", "LazyDetector", "PhotoMode", "PhotoOptions", "PhotoStage", "is_photo", "page_stats",
    "typeset_shares",
]

PhotoMode = Literal["auto", "on", "off"]
PHOTO_DETECTOR = "db_mobilenet_v3_large_photo"
"""The registered detector that reads pages the gate calls photos."""

_THUMB = 320


@dataclass(frozen=True)
class PhotoOptions:
    """How pages are told apart and what photos get.

    Attributes:
        mode: ``"auto"`` (the gate below), ``"on"`` (every page is a photo) or ``"off"`` (none is).
        max_words: a page is a photo only with fewer detected boxes than this.
        max_paper: ... and a ``paper`` share (:func:`page_stats`) below this,
        min_colour: ... or a ``colour`` share above this.
        det_arch: the detector that reads photos (``None``: the page's own detector; the photo detector is
            used only with the default detector and weights, so a chosen detector is never swapped out).
        sparse_words: the ``sparse`` rule's ``max_words`` on photos (0: off).
        typeset_words: a page with at least this many boxes whose boxes look typeset (:func:`typeset_shares`:
            at least ``typeset_aligned`` of them share a left edge with two boxes on other lines, at least
            ``typeset_uniform`` of them are of the common height) is a document whatever its background (a
            receipt or a letter photographed on a table); 0: off.
    """

    mode: PhotoMode = "auto"
    max_words: int = 80
    max_paper: float = 0.4
    min_colour: float = 0.2
    det_arch: str | None = PHOTO_DETECTOR
    sparse_words: int = 80
    typeset_words: int = 30
    typeset_aligned: float = 0.75
    typeset_uniform: float = 0.7

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "on", "off"):
            raise ValueError(f"photo mode must be 'auto', 'on' or 'off', got {self.mode!r}")
        if self.max_words < 0 or self.sparse_words < 0 or self.typeset_words < 0:
            raise ValueError("max_words, sparse_words and typeset_words must be >= 0")
        for name in ("max_paper", "min_colour", "typeset_aligned", "typeset_uniform"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")


def page_stats(image: np.ndarray) -> tuple[float, float]:
    """``(paper, colour)`` of a page (``image``: RGB or grey uint8), on a 320-px thumbnail.

    ``paper``: the share of pixels within 12 grey levels of the most common level (paper, a screen's
    background, a table crop: mostly 0.5-0.95; natural photos mostly under 0.6). ``colour``: the share of
    pixels whose chroma (CIELAB a*, b*) lies more than 10 from the page's median chroma (tinted paper scores
    0; scans and rendered documents, under 0.05 almost always; colour photos 0.1-0.9)."""
    h, w = image.shape[:2]
    if h == 0 or w == 0:
        return 1.0, 0.0
    s = _THUMB / max(h, w)
    thumb = cv2.resize(image, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)
    if thumb.ndim == 2:
        thumb = cv2.cvtColor(thumb, cv2.COLOR_GRAY2RGB)
    grey = cv2.GaussianBlur(cv2.cvtColor(thumb, cv2.COLOR_RGB2GRAY), (3, 3), 0)
    hist = np.bincount((grey // 8).ravel(), minlength=32).astype(np.float64)
    mode = int(np.argmax(hist))
    paper = float(hist[max(0, mode - 1):mode + 2].sum() / hist.sum())
    lab = cv2.cvtColor(thumb, cv2.COLOR_RGB2LAB).astype(np.float32)
    a, b = lab[..., 1], lab[..., 2]
    colour = float(np.mean(np.hypot(a - np.median(a), b - np.median(b)) > 10))
    return paper, colour


def typeset_shares(boxes: np.ndarray) -> tuple[float, float]:
    """``(aligned, uniform)`` of a page's word boxes (``float[N, 4]`` xyxy, one scale for x and y).

    ``aligned``: the share of boxes whose left edge lies within half the median box height of the left edges
    of at least two boxes on other lines (centres more than 0.6 median heights apart): lines that start at a
    margin or a column, as print does. ``uniform``: the share of boxes within 25% of the median height. On
    synthetic close-up receipt photos both are mostly above 0.8; on synthetic scenes the aligned share stays
    under 0.7 (``docs/pipeline.md``)."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    if len(b) < 3:
        return 0.0, 0.0
    heights = b[:, 3] - b[:, 1]
    med = float(np.median(heights))
    centres = (b[:, 1] + b[:, 3]) / 2
    near = np.abs(b[:, None, 0] - b[None, :, 0]) < 0.5 * med
    other_line = np.abs(centres[:, None] - centres[None, :]) > 0.6 * med
    aligned = float(np.mean((near & other_line).sum(1) >= 2))
    uniform = float(np.mean(np.abs(heights - med) <= 0.25 * med))
    return aligned, uniform


def is_photo(state: PageState, options: PhotoOptions) -> bool:
    """The gate for one detected page (see the module docstring)."""
    if options.mode != "auto":
        return options.mode == "on"
    n = 0 if state.boxes is None else len(state.boxes)
    if n >= options.max_words:
        return False
    if options.typeset_words and n >= options.typeset_words:
        h, w = state.image.shape[:2]
        boxes = np.asarray(state.boxes, np.float64) * [w, h, w, h]
        if state.layout_map is not None:  # a tilted or photographed page: its words levelled first
            boxes = level_boxes(word_quads(boxes, state.layout_map), state.layout_map)
        aligned, uniform = typeset_shares(boxes)
        if aligned >= options.typeset_aligned and uniform >= options.typeset_uniform:
            return False
    paper, colour = page_stats(state.image)
    return paper < options.max_paper or colour > options.min_colour


class PhotoStage:
    """Mark photos (``PageState.photo``) and detect them again with ``detect`` routed to the photo detector.

    Args:
        options: the gate's thresholds.
        detect: the pipeline's detect stage (:class:`~vision.pipelines.ocr.stages.DetectStage`); it reads
            pages marked as photos with its ``photo_predictor`` when it has one.
    """

    def __init__(self, options: PhotoOptions, detect: Callable[[list[PageState]], list[PageState]]) -> None:
        self.options, self.detect = options, detect

    def __call__(self, states: list[PageState]) -> list[PageState]:
        again = []
        for s in states:
            if not s.needs_ocr or s.photo or not is_photo(s, self.options):
                continue
            s.photo = True
            if getattr(self.detect, "photo_predictor", None) is not None:
                s.boxes = s.polygons = s.scores = None
                if s.inverted:  # the photo detector reads photos as taken (see the module docstring)
                    s.image, s.inverted = 255 - s.image, False
                again.append(s)
        if again:
            self.detect(again)
        return states


class LazyDetector:
    """A detection predictor built on its first call (the photo detector: documents never load it).

    Copies share the one model; ``straight`` (straight boxes or rotated quads) and ``outlines`` are each
    copy's own, as on :class:`~vision.predictors.detection.predictor.DetectionPredictor`.

    Args:
        build: ``() -> predictor``, called once.
        straight: straight boxes (``True``) or rotated quads.
        outlines: also each word's outline polygon.
    """

    def __init__(self, build: Callable[[], Any], *, straight: bool = True, outlines: bool = False) -> None:
        self.build, self.straight, self.outlines = build, straight, outlines
        self._cell: list[Any] = [None]
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        """Whether the model has been built (by this object or a copy)."""
        return self._cell[0] is not None

    def __call__(self, pages: list[Any]) -> Sequence[Any]:
        with self._lock:
            if self._cell[0] is None:
                self._cell[0] = self.build()
        predictor = self._cell[0]
        wanted = (self.straight, self.outlines)
        built = (getattr(predictor, "straight", self.straight), getattr(predictor, "outlines", self.outlines))
        if built != wanted:
            predictor = copy.copy(predictor)  # shares the model; only the box decoding differs
            predictor.straight, predictor.outlines = wanted
        return predictor(pages)
