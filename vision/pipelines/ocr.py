"""End-to-end OCR: ``ocr_predictor()`` and the stages it composes.

    read -> text_layer -> (orientation) -> detect -> crop -> recognize -> layout  =>  Document

Each stage is a callable over a batch of :class:`~vision.pipelines.base.PageState`; swap one by name with
``predictor.pipeline = predictor.pipeline.replace("detect", my_stage)``. The predictor feeds pages in batches
of ``pages_per_batch`` (pages are read by a background thread while the models run), and recognition reads
the crops of all pages of a batch in one call, so its batches stay full whatever the words per page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import torch

from vision.io.page import PageImage
from vision.ops.crops import box_crops, polygon_crops
from vision.pipelines._prefetch import prefetch
from vision.pipelines.base import PageState, Pipeline, as_pages, chunked
from vision.pipelines.layout import LayoutOptions, build_blocks, find_regions
from vision.pipelines.orientation import OrientationStage, deskew_boxes, dominant_angle, unrotate_points
from vision.pipelines.text_layer import PdfTextMode, TextLayerStage
from vision.structures import Document, Page, Word
from vision.structures.geometry import clip_box

__all__ = [
    "OCROptions",
    "OCRPredictor",
    "ocr_predictor",
    "read_stage",
    "DetectStage",
    "CropStage",
    "RecognizeStage",
    "LayoutStage",
    "split_spaced",
]


@dataclass(frozen=True)
class OCROptions:
    """Every setting of the OCR predictor, typed (names follow docTR's where the meaning is the same).

    Attributes:
        det_arch, reco_arch: registered architectures (``None``: the registry defaults).
        det_weights, reco_weights: ``"default"`` (shipped), a safetensors path, or ``None`` (random, tests).
        device: ``"cpu"``, ``"cuda"``, ... (``None``: CUDA when available).
        dtype: model dtype (``None``: float32).
        det_batch_size: pages per detection forward pass.
        reco_batch_size: crops per recognition forward pass.
        pages_per_batch: pages that go through the stages together (bounds memory on long documents).
        assume_straight_pages: straight word boxes; ``False`` detects rotated quads, cuts them upright and
            groups lines on the deskewed page (skew up to about 10 degrees, rotated lines).
        detect_orientation: turn pages rotated by 90, 180 or 270 degrees upright first.
        straighten_pages: report geometry on the upright page (and keep that image) instead of mapping it
            back onto the page as given.
        pdf_text: ``"auto"``, ``"ocr"`` or ``"layer"`` (see :mod:`vision.pipelines.text_layer`).
        layout: thresholds of the line/block/reading-order rules and non-text regions.
        crops_on_device: cut and recognise crops on the recognizer's device
            (:mod:`vision.pipelines.device`); ``None``: when it runs on a GPU.
    """

    det_arch: str | None = None
    reco_arch: str | None = None
    det_weights: str | None = "default"
    reco_weights: str | None = "default"
    device: str | None = None
    dtype: torch.dtype | None = None
    det_batch_size: int = 4
    reco_batch_size: int = 256
    pages_per_batch: int = 16
    assume_straight_pages: bool = True
    detect_orientation: bool = False
    straighten_pages: bool = False
    pdf_text: PdfTextMode = "auto"
    layout: LayoutOptions = field(default_factory=LayoutOptions)
    crops_on_device: bool | None = None

    def __post_init__(self) -> None:
        for name in ("det_batch_size", "reco_batch_size", "pages_per_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")


def read_stage(pages: list[PageImage]) -> list[PageState]:
    """Pages as read -> working states (the working image starts as the page itself)."""
    return [PageState(page=p, image=p.image) for p in pages]


class DetectStage:
    """Fill ``boxes``, ``polygons`` and ``scores`` of pages that need OCR and are not detected yet."""

    def __init__(self, predictor: Callable[[list[np.ndarray]], Sequence[Any]]) -> None:
        self.predictor = predictor

    def __call__(self, states: list[PageState]) -> list[PageState]:
        todo = [s for s in states if s.needs_ocr and s.boxes is None]
        if todo:
            for state, res in zip(todo, self.predictor([s.image for s in todo])):
                state.boxes = np.asarray(res.boxes, dtype=np.float32).reshape(-1, 4)
                state.scores = np.asarray(res.scores, dtype=np.float32).reshape(-1)
                state.polygons = np.asarray(res.polygons, dtype=np.float32).reshape(-1, 4, 2)
        return states


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
    """Read the crops of every page of the batch in one recognizer call, then hand texts back per page."""

    def __init__(self, predictor: Callable[[list[np.ndarray]], list[tuple[str, float]]]) -> None:
        self.predictor = predictor

    def __call__(self, states: list[PageState]) -> list[PageState]:
        todo = [s for s in states if s.needs_ocr]
        flat = [c for s in todo for c in s.crops]
        texts = self.predictor(flat) if flat else []
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

    def _words(self, s: PageState) -> None:
        h, w = s.image.shape[:2]
        parts = [
            (text, float(conf), quad)
            for (raw, conf), quad in zip(s.texts, s.polygons.astype(np.float64))
            for text, quad in split_spaced(raw, quad)
        ]
        quads = np.array([q for _, _, q in parts]).reshape(-1, 4, 2)
        if self.straight:
            s.layout_boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1) * [w, h, w, h]
        else:
            s.skew = dominant_angle(s.polygons.astype(np.float64) * [w, h])
            s.layout_boxes = deskew_boxes(quads, s.skew, (h, w))
        if not self.straighten_pages:
            quads = unrotate_points(quads, s.orientation)
        exact_box = self.straight and (s.orientation == 0 or self.straighten_pages)
        s.words = []
        for (text, conf, _), quad in zip(parts, quads):
            box = clip_box(np.r_[quad.min(axis=0), quad.max(axis=0)])
            polygon = None if exact_box else tuple((float(x), float(y)) for x, y in np.clip(quad, 0, 1))
            s.words.append(Word(text, conf, box, polygon))  # type: ignore[arg-type]

    def page(self, s: PageState) -> Page:
        """The finished page of one state."""
        if s.needs_ocr:
            self._words(s)
        boxes = s.layout_boxes if s.layout_boxes is not None else np.zeros((0, 4))
        blocks = build_blocks(s.words, boxes, self.options)
        if self.options.regions:
            h, w = s.image.shape[:2]
            s.regions = find_regions(s.image, boxes / [w, h, w, h], self.options)
            if not self.straighten_pages and s.orientation:
                for r in s.regions:
                    corners = unrotate_points(np.reshape(r.geometry, (2, 2)), s.orientation)
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
        )


class OCRPredictor:
    """``predictor(doc) -> Document`` for a ``DocumentFile``, ``PageImage`` objects or numpy pages.

    Attributes:
        pipeline: the stages (replace one to change the behaviour).
        options: the settings it was built with.
    """

    def __init__(self, pipeline: Pipeline, options: OCROptions) -> None:
        self.pipeline, self.options = pipeline, options

    def __call__(self, doc: Any) -> Document:
        pages: list[Page] = []
        for batch in prefetch(chunked(as_pages(doc), self.options.pages_per_batch)):
            pages.extend(self.pipeline(batch))
        return Document(pages=pages, source=getattr(doc, "source", None))

    def __repr__(self) -> str:
        return f"OCRPredictor({self.pipeline!r})"


def _on_device(options: OCROptions, reco_predictor: Callable) -> bool:
    """Whether crops are cut on the recognizer's device (a recognition predictor on a GPU, unless told)."""
    from vision.models.recognition.predictor import RecognitionPredictor

    usable = isinstance(reco_predictor, RecognitionPredictor)
    if options.crops_on_device is None:
        return usable and reco_predictor.device.type != "cpu"
    if options.crops_on_device and not usable:
        raise ValueError(
            "crops_on_device needs a RecognitionPredictor (its model runs on the crops directly)"
        )
    return options.crops_on_device


def build_pipeline(options: OCROptions, det_predictor: Callable, reco_predictor: Callable) -> Pipeline:
    """The standard stages for ``options`` around a detection and a recognition predictor.

    With crops on the device, one ``recognize`` stage cuts and reads (:mod:`vision.pipelines.device`).
    """
    straight = options.assume_straight_pages
    detect = DetectStage(det_predictor)
    stages: list[tuple[str, Callable]] = [
        ("read", read_stage),
        ("text_layer", TextLayerStage(options.pdf_text)),
    ]
    if options.detect_orientation:
        stages.append(("orientation", OrientationStage(detect, reco_predictor)))
    stages.append(("detect", detect))
    if _on_device(options, reco_predictor):
        from vision.pipelines.device import DeviceRecognizeStage

        stages.append(("recognize", DeviceRecognizeStage(reco_predictor, straight=straight)))
    else:
        stages += [("crop", CropStage(straight=straight)), ("recognize", RecognizeStage(reco_predictor))]
    stages.append(
        ("layout", LayoutStage(options.layout, straight=straight, straighten_pages=options.straighten_pages))
    )
    return Pipeline(stages)


def ocr_predictor(
    det_arch: str | None = None,
    reco_arch: str | None = None,
    *,
    det_weights: str | None = "default",
    reco_weights: str | None = "default",
    det_predictor: Callable | None = None,
    reco_predictor: Callable | None = None,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    assume_straight_pages: bool = True,
    detect_orientation: bool = False,
    straighten_pages: bool = False,
    pdf_text: PdfTextMode = "auto",
    det_batch_size: int = 4,
    reco_batch_size: int = 256,
    pages_per_batch: int = 16,
    layout: LayoutOptions | None = None,
    crops_on_device: bool | None = None,
) -> OCRPredictor:
    """Build the end-to-end OCR predictor (the settings are those of :class:`OCROptions`).

    Models load the shipped offline weights; ``det_weights=None, reco_weights=None`` build random models
    (tests), and ``det_predictor`` / ``reco_predictor`` take prebuilt predictors (any callables with the
    detection and recognition predictor contracts) instead of building them.

    Raises:
        vision.errors.WeightsError: when the default weights are not installed.
    """
    options = OCROptions(
        det_arch=det_arch,
        reco_arch=reco_arch,
        det_weights=det_weights,
        reco_weights=reco_weights,
        device=None if device is None else str(device),
        dtype=dtype,
        det_batch_size=det_batch_size,
        reco_batch_size=reco_batch_size,
        pages_per_batch=pages_per_batch,
        assume_straight_pages=assume_straight_pages,
        detect_orientation=detect_orientation,
        straighten_pages=straighten_pages,
        pdf_text=pdf_text,
        layout=layout or LayoutOptions(),
        crops_on_device=crops_on_device,
    )
    if pdf_text not in ("auto", "ocr", "layer"):
        raise ValueError(f"pdf_text must be 'auto', 'ocr' or 'layer', got {pdf_text!r}")
    if det_predictor is None:
        from vision.models.detection.predictor import detection_predictor

        det_predictor = detection_predictor(
            det_arch,
            weights=det_weights,
            device=device,
            dtype=dtype,
            batch_size=det_batch_size,
            assume_straight_pages=assume_straight_pages,
        )
    if reco_predictor is None:
        from vision.models.recognition.predictor import recognition_predictor

        reco_predictor = recognition_predictor(
            reco_arch, weights=reco_weights, device=device, dtype=dtype, batch_size=reco_batch_size
        )
    return OCRPredictor(build_pipeline(options, det_predictor, reco_predictor), options)
