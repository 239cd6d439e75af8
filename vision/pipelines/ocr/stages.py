"""The stages of the OCR pipeline: read, detect, crop, recognize, layout (see :mod:`vision.pipelines.ocr.predictor`).

Each is a callable over a batch of :class:`~vision.pipelines.base.PageState` (the layout stage returns
finished :class:`~vision.structures.Page` objects). Orientation, deskew and text-layer stages live in
:mod:`~vision.pipelines.ocr.orientation` and :mod:`~vision.pipelines.ocr.text_layer`; the device variant of crop +
recognize in :mod:`~vision.pipelines.ocr.device`.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from vision.io.page import PageImage
from vision.ops.boxes import boxes_to_polygons, corner_boxes, polygons_to_boxes
from vision.ops.crops import box_crops, polygon_crops
from vision.pipelines.base import PageState
from vision.pipelines.ocr.device import device_page
from vision.pipelines.ocr.orientation import deskew_boxes, dominant_angle, unrotate_points
from vision.pipelines.ocr.reading_order import LayoutOptions, build_blocks, find_regions
from vision.pipelines.ocr.skew import level_boxes, level_map, word_quads
from vision.structures import Page, Word
from vision.structures.geometry import clip_box

__all__ = ["read_stage", "DetectStage", "CropStage", "RecognizeStage", "LayoutStage", "split_spaced"]


def read_stage(pages: list[PageImage]) -> list[PageState]:
    """Pages as read -> working states (the working image starts as the page itself)."""
    return [PageState(page=p, image=p.image) for p in pages]


class DetectStage:
    """Fill ``boxes``, ``polygons`` and ``scores`` of pages that need OCR and are not detected yet.

    Args:
        predictor: pages -> detection results (the detection predictor contract).
        device: hand the predictor each page uploaded to this device
            (:func:`~vision.pipelines.ocr.device.device_page`, kept for the crop cutter) instead of the host
            array; for a predictor that fits pages there.
        photo_predictor: the detector of pages marked as photos (``PageState.photo``, set by
            :class:`~vision.pipelines.ocr.photo.PhotoStage`); ``None``: ``predictor`` reads every page.
    """

    def __init__(self, predictor: Callable[[list[Any]], Sequence[Any]], *, device: Any = None,
                 photo_predictor: Callable[[list[Any]], Sequence[Any]] | None = None) -> None:
        self.predictor, self.device, self.photo_predictor = predictor, device, photo_predictor

    def __call__(self, states: list[PageState]) -> list[PageState]:
        todo = [s for s in states if s.needs_ocr and s.boxes is None]
        routed = self.photo_predictor is not None
        photos = [s for s in todo if routed and s.photo]
        pages = [s for s in todo if not (routed and s.photo)]
        for group, predictor in ((photos, self.photo_predictor), (pages, self.predictor)):
            if group:
                self._detect(group, predictor)
        return states

    def again(self, states: list[PageState], zooms: list[float]) -> None:
        """Detect ``states`` again with the page detector, shrunk to ``zooms`` in its input
        (:mod:`~vision.pipelines.ocr.text_scale`); their words replace the first pass's."""
        self._detect(states, self.predictor, zooms)

    def _detect(self, todo: list[PageState], predictor: Callable[..., Sequence[Any]],
                zooms: list[float] | None = None) -> None:
        if self.device is None:
            pages: list[Any] = [s.image for s in todo]
        else:
            pages = [device_page(s, self.device) for s in todo]
        found = predictor(pages) if zooms is None else predictor(pages, zooms)
        for state, res in zip(todo, found):
            state.boxes = np.asarray(res.boxes, dtype=np.float32).reshape(-1, 4)
            state.scores = np.asarray(res.scores, dtype=np.float32).reshape(-1)
            state.polygons = np.asarray(res.polygons, dtype=np.float32).reshape(-1, 4, 2)
            state.outlines = getattr(res, "outlines", None)
            h, w = state.image.shape[:2]
            state.layout_map = level_map(getattr(res, "angles", None), state.boxes * [w, h, w, h], (h, w))


class CropStage:
    """Cut word images: views of the page for straight boxes, perspective warps for rotated quads."""

    def __init__(self, *, straight: bool = True) -> None:
        self.straight = straight

    def __call__(self, states: list[PageState]) -> list[PageState]:
        for s in states:
            if not s.needs_ocr:
                continue
            s.crops = box_crops(s.image, s.boxes) if self.straight else polygon_crops(s.image, s.polygons)
        return states


class RecognizeStage:
    """Read the crops of every page of the batch in one recognizer call, then hand texts back per page.

    On photos (``PageState.photo``), unsure readings of slanted words are read again sheared (the predictor's
    ``reread_slanted``, :mod:`vision.predictors.recognition.tilt`) unless the predictor does it for every
    crop itself (``slanted=True``); scans and rendered pages keep their straight reading.
    """

    def __init__(self, predictor: Callable[[list[np.ndarray]], list[tuple[str, float]]]) -> None:
        self.predictor = predictor

    def __call__(self, states: list[PageState]) -> list[PageState]:
        todo = [s for s in states if s.needs_ocr]
        flat = [c for s in todo for c in s.crops]
        texts = self.predictor(flat) if flat else []
        reread = getattr(self.predictor, "reread_slanted", None)
        if reread is not None and not getattr(self.predictor, "slanted", False):
            at = np.cumsum([0] + [len(s.crops) for s in todo])
            photos = [i for s, a, b in zip(todo, at[:-1], at[1:]) if s.photo for i in range(a, b)]
            if photos:
                for i, result in zip(photos, reread([flat[i] for i in photos], [texts[i] for i in photos])):
                    texts[i] = result
        start = 0
        for s in todo:
            s.texts = list(texts[start : start + len(s.crops)])
            s.crops = None  # views of the page: drop them early
            start += len(s.texts)
        return states


def split_spaced(text: str, quad: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The words of one recognised crop, each with its share of the crop's quad.

    A detector sometimes boxes two words as one and the recognizer then reads a space; a ``Word`` holds
    one word, so the text is split at whitespace and the quad ``[4, 2]`` (clockwise from the text's
    top-left) is divided along its top and bottom edges in proportion to character counts, spaces
    included (the evaluation README splits line boxes by the same rule). Blank text gives no words.
    """
    text = text.strip()
    if not text:
        return []
    if " " not in text and "\t" not in text:
        return [(text, quad)]
    p0, p1, p2, p3 = np.asarray(quad, dtype=np.float64)
    out = []
    for match in re.finditer(r"\S+", text):
        a, b = match.start() / len(text), match.end() / len(text)
        sub = np.array([p0 + a * (p1 - p0), p0 + b * (p1 - p0), p3 + b * (p2 - p3), p3 + a * (p2 - p3)])
        out.append((match.group(), sub))
    return out


class LayoutStage:
    """Build words (geometry in the output frame), arrange them into blocks and lines, and make ``Page``s."""

    def __init__(
        self,
        options: LayoutOptions = LayoutOptions(),
        *,
        straight: bool = True,
        straighten_pages: bool = False,
    ) -> None:
        self.options, self.straight, self.straighten_pages = options, straight, straighten_pages

    def __call__(self, states: list[PageState]) -> list[Page]:
        return [self.page(s) for s in states]

    def _to_output(self, s: PageState, quads: np.ndarray) -> np.ndarray:
        """Relative working-image quads ``[N, 4, 2]`` -> output page quads (see ``straighten_pages``)."""
        if self.straighten_pages:
            return quads
        if s.deskew is not None:  # levelled image -> the page turned by `orientation`
            h, w = s.image.shape[:2]
            ph, pw = s.page.image.shape[:2]
            th, tw = (pw, ph) if s.orientation in (90, 270) else (ph, pw)
            px = quads * [w, h] @ s.deskew[:, :2].T + s.deskew[:, 2]
            quads = px / [tw, th]
        return unrotate_points(quads, s.orientation)

    def _words(self, s: PageState) -> None:
        h, w = s.image.shape[:2]
        outlines = s.outlines if s.outlines is not None and len(s.outlines) == len(s.texts) else None
        parts, shapes = [], []
        for i, ((raw, conf), quad) in enumerate(zip(s.texts, s.polygons.astype(np.float64))):
            split = split_spaced(raw, quad)
            parts += [(text, float(conf), q) for text, q in split]
            whole = outlines is not None and len(split) == 1  # an outline is one region's: not a split word's
            shapes += [self._outline(s, outlines[i]) if whole else None] * len(split)  # type: ignore[index]
        quads = np.array([q for _, _, q in parts]).reshape(-1, 4, 2)
        if self.straight and not self.options.level_lines:
            s.layout_map = None
        if self.straight and s.layout_map is None:
            s.layout_boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1) * [w, h, w, h]
        elif self.straight:  # tilted or photographed at an angle (its words' directions): lines read level
            hulls = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1) * [w, h, w, h]
            s.layout_boxes = level_boxes(word_quads(hulls, s.layout_map), s.layout_map)
        else:
            s.skew = dominant_angle(s.polygons.astype(np.float64) * [w, h])
            s.layout_boxes = deskew_boxes(quads, s.skew, (h, w))
        quads = self._to_output(s, quads)
        exact_box = self.straight and (self.straighten_pages or (s.orientation == 0 and s.deskew is None))
        boxes = corner_boxes(quads.min(axis=1), quads.max(axis=1)).tolist()
        polygons = [None] * len(parts) if exact_box else np.clip(quads, 0, 1).tolist()
        s.words = [
            Word(text, conf, tuple(box),  # type: ignore[arg-type]
                 None if poly is None else tuple(map(tuple, poly)), shape)  # type: ignore[arg-type]
            for (text, conf, _), box, poly, shape in zip(parts, boxes, polygons, shapes)
        ]

    def _outline(self, s: PageState, points: np.ndarray) -> tuple[tuple[float, float], ...]:
        """One word's relative working-image outline ``[K, 2]`` in the output frame."""
        out = np.clip(self._to_output(s, np.asarray(points, np.float64)[None])[0], 0, 1)
        return tuple((float(x), float(y)) for x, y in out)

    def page(self, s: PageState) -> Page:
        """The finished page of one state."""
        if s.needs_ocr:
            self._words(s)
        boxes = s.layout_boxes if s.layout_boxes is not None else np.zeros((0, 4))
        obstacles = None
        if self.options.regions:  # found first: figures hold a column's place beside its gutter
            h, w = s.image.shape[:2]
            mapped = self.straight and s.layout_map is not None
            levelled = (mapped or bool(s.skew)) and s.polygons is not None  # regions need the image's boxes
            frame = polygons_to_boxes(np.asarray(s.polygons, np.float64)) if levelled else boxes / [w, h, w, h]
            s.regions = find_regions(s.image, frame, self.options)
            found = np.array([r.geometry for r in s.regions], dtype=np.float64).reshape(-1, 4)
            if not levelled:
                obstacles = found * [w, h, w, h]
            elif mapped:
                obstacles = level_boxes(boxes_to_polygons(found) * [w, h], s.layout_map)
            else:
                obstacles = deskew_boxes(boxes_to_polygons(found), s.skew, (h, w))
        blocks = build_blocks(s.words, boxes, self.options, obstacles)
        if self.options.regions:
            for r in s.regions:
                x0, y0, x1, y1 = r.geometry
                corners = self._to_output(s, np.array([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]]))[0]
                r.geometry = clip_box(np.r_[corners.min(axis=0), corners.max(axis=0)])
        image = s.image if self.straighten_pages else s.page.image
        return Page(
            page_idx=s.page.index,
            dimensions=(int(image.shape[0]), int(image.shape[1])),
            blocks=blocks,
            regions=s.regions,
            orientation=s.orientation,
            timestamp=s.page.timestamp,
            source=s.page.source,
            image=image,
            warnings=list(s.warnings),
        )
