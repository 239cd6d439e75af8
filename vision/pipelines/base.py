"""A small pipeline: named stages, each a callable over a batch of pages, run in order.

Not a framework: a stage is any ``Callable[[list[T]], list[U]]``. The OCR pipeline passes
:class:`PageState` records between its stages (see :mod:`vision.pipelines.ocr.predictor`), and a user swaps a stage by
name with :meth:`Pipeline.replace`::

    pipe = predictor.pipeline.replace("detect", my_detect_stage)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vision.io.page import PageImage
from vision.structures import Region, Word

__all__ = ["PageState", "Pipeline", "Stage", "as_pages", "chunked"]

Stage = Callable[[list[Any]], list[Any]]


class Pipeline:
    """Stages applied in order to a batch; each stage returns the batch the next one takes."""

    def __init__(self, stages: Sequence[tuple[str, Stage]]) -> None:
        names = [name for name, _ in stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique, got {names}")
        self._stages = list(stages)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self._stages]

    def __getitem__(self, name: str) -> Stage:
        for key, stage in self._stages:
            if key == name:
                return stage
        raise KeyError(f"no stage {name!r}; stages: {self.names}")

    def replace(self, name: str, stage: Stage) -> Pipeline:
        """A new pipeline with stage ``name`` swapped for ``stage``."""
        self[name]  # raises on unknown names
        return Pipeline([(key, stage if key == name else old) for key, old in self._stages])

    def insert(self, before: str, name: str, stage: Stage) -> Pipeline:
        """A new pipeline with ``stage`` added just before the stage named ``before``."""
        index = self.names.index(before) if before in self.names else -1
        if index < 0:
            raise KeyError(f"no stage {before!r}; stages: {self.names}")
        return Pipeline([*self._stages[:index], (name, stage), *self._stages[index:]])

    def without(self, name: str) -> Pipeline:
        """A new pipeline without the stage ``name``."""
        self[name]
        return Pipeline([(key, st) for key, st in self._stages if key != name])

    def __call__(self, batch: list[Any]) -> list[Any]:
        for _, stage in self._stages:
            batch = stage(batch)
        return batch

    def __repr__(self) -> str:
        return f"Pipeline({' -> '.join(self.names)})"


@dataclass
class PageState:
    """One page on its way through the OCR stages.

    Geometry lives in the *working frame*: the input page turned clockwise by ``orientation`` degrees,
    then levelled by ``deskew`` when that is set.

    Attributes:
        page: the page as read (image and metadata).
        image: the working-frame RGB ``(H, W, 3)`` uint8 image the models read.
        orientation: clockwise degrees applied to ``page.image`` to get ``image`` (0, 90, 180, 270).
        skew: measured text angle in degrees on ``image`` (rotated pages only; used by the layout).
        layout_map: ``float[3, 3]`` map of ``image`` pixels under which the text lines of a straight-box page
            run level (:func:`vision.pipelines.ocr.skew.level_map`, from the detector's word directions), or
            ``None``; the layout groups the boxes mapped so.
        deskew: ``2 x 3`` affine map from ``image`` pixels back to the turned page's pixels when
            :class:`~vision.pipelines.ocr.orientation.DeskewStage` levelled the page, else ``None``.
        boxes: ``[N, 4]`` float32 relative word boxes from detection (``None`` until detected).
        polygons: ``[N, 4, 2]`` float32 relative quads, clockwise from the text's top-left.
        scores: ``[N]`` detection scores.
        outlines: one ``float32[K, 2]`` relative outline polygon per word when the detector gives them
            (``OCROptions.outlines``), else ``None``.
        crops: word images cut for recognition (arrays, or a device batch chosen by the crop stage).
        texts: ``(text, confidence)`` per crop.
        words: finished words (geometry in the output frame) with their ``layout_boxes``.
        layout_boxes: ``[len(words), 4]`` pixel boxes of the words on the upright working page.
        from_text_layer: the words come from a PDF text layer; detection and recognition skip the page.
        photo: the page is a photo (:mod:`vision.pipelines.ocr.photo`): the photo detector and the sparse rule
            read it.
        inverted: ``image`` is the page's negative (:mod:`vision.pipelines.ocr.polarity`).
        regions: non-text regions found by the layout.
        warnings: notes for the finished page (``Page.warnings``), e.g. a script the recognizer does not read.
        device_image: ``image`` uploaded to a device once for every stage that reads it there, with the
            array it was made from (stale, and uploaded again, once a stage replaces ``image``); see
            :func:`vision.pipelines.ocr.device.device_page`.
    """

    page: PageImage
    image: np.ndarray
    orientation: int = 0
    skew: float = 0.0
    deskew: np.ndarray | None = None
    layout_map: np.ndarray | None = None
    boxes: np.ndarray | None = None
    polygons: np.ndarray | None = None
    scores: np.ndarray | None = None
    outlines: list[np.ndarray] | None = None
    crops: Any = None
    texts: list[tuple[str, float]] | None = None
    words: list[Word] = field(default_factory=list)
    layout_boxes: np.ndarray | None = None
    from_text_layer: bool = False
    photo: bool = False
    inverted: bool = False
    regions: list[Region] = field(default_factory=list)
    device_image: tuple[np.ndarray, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def needs_ocr(self) -> bool:
        return not self.from_text_layer

    def keep_words(self, keep: np.ndarray) -> None:
        """Keep the detected words where ``keep`` (``bool[N]``) is true: their texts (once read), boxes,
        polygons, scores and outlines alike."""
        keep = np.asarray(keep, dtype=bool)
        if self.texts is not None and len(self.texts) == len(keep):
            self.texts = [t for t, k in zip(self.texts, keep) if k]
        if self.outlines is not None and len(self.outlines) == len(keep):
            self.outlines = [o for o, k in zip(self.outlines, keep) if k]
        for name in ("boxes", "polygons", "scores"):
            value = getattr(self, name)
            if value is not None and len(value) == len(keep):
                setattr(self, name, value[keep])


def _check_image(image: Any, source: str) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        desc = f"{type(image).__name__} {getattr(image, 'shape', '')} {getattr(image, 'dtype', '')}".strip()
        raise ValueError(f"{source}: pages must be RGB uint8 arrays of shape (H, W, 3), got {desc}")
    if image.shape[0] < 1 or image.shape[1] < 1:
        raise ValueError(f"{source}: empty page of shape {image.shape}")
    return np.ascontiguousarray(image)


def as_pages(doc: Any) -> Iterator[PageImage]:
    """Pages of any accepted input, lazily: a ``DocumentFile`` or iterable of ``PageImage``, a list of numpy
    pages, or one numpy page.

    Raises:
        ValueError: for anything else (the message names the offending item).
    """
    if isinstance(doc, (np.ndarray, PageImage)):
        doc = [doc]
    if not isinstance(doc, Iterable) or isinstance(doc, (str, bytes)):
        raise ValueError(
            f"expected a DocumentFile, PageImage objects or numpy pages, got {type(doc).__name__}"
        )
    for i, item in enumerate(doc):
        if isinstance(item, PageImage):
            _check_image(item.image, item.source)
            yield item
        else:
            image = _check_image(item, f"<array {i}>")
            yield PageImage(image=image, source="<array>", index=i, original_size=image.shape[:2])


def chunked(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Consecutive lists of at most ``size`` items."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
