"""Segment pages with SAM: prompted masks (points and/or boxes) or automatic masks, as ``Region(kind="mask")``
on a :class:`~vision.structures.Page`, so they export with the rest of a document (masks run-length encoded).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from vision.io.page import PageImage
from vision.structures import Document, Page, Region

__all__ = ["segment_document", "segment_image"]


def segment_image(image: np.ndarray | PageImage, predictor: Any, *, points: Sequence[Sequence[float]] | None = None,
                  labels: Sequence[int] | None = None, boxes: Sequence[Sequence[float]] | None = None,
                  auto: bool = False, multimask: bool = False, auto_options: dict[str, Any] | None = None) -> Page:
    """Masks of one page.

    Args:
        image: RGB uint8 ``(H, W, 3)`` or a :class:`PageImage`.
        predictor: a :class:`~vision.predictors.segmentation.predictor.SamPredictor`.
        points, labels: pixel ``(x, y)`` points forming one prompt (labels default to 1 = foreground).
        boxes: pixel ``xyxy`` boxes, one prompt each (combined with ``points`` when exactly one box is given).
        auto: ignore prompts and run the automatic mask generator (``auto_options`` override its settings).
        multimask: keep SAM's best of 3 ambiguity masks per prompt (recommended for a single point).

    Returns:
        a :class:`Page` whose ``regions`` are the masks, best first per prompt.
    """
    page = image if isinstance(image, PageImage) else PageImage(image=image, source="<array>", index=0,
                                                                 original_size=image.shape[:2])
    if auto:
        from vision.predictors.segmentation.automatic import SamAutomaticMaskGenerator

        regions = SamAutomaticMaskGenerator(predictor, **(auto_options or {})).generate(page.image)
    else:
        regions = _prompted(page.image, predictor, points, labels, boxes, multimask)
    return Page(page_idx=page.index, dimensions=page.size, regions=regions, source=page.source, image=page.image)


def _prompted(image: np.ndarray, predictor: Any, points: Any, labels: Any, boxes: Any, multimask: bool) -> list[Region]:
    if points is None and boxes is None:
        raise ValueError("give points, boxes, or auto=True")
    predictor.set_image(image)
    box_arr = None if boxes is None else np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if points is not None:
        pts = np.asarray(points, dtype=np.float64).reshape(1, -1, 2)
        lab = np.ones(pts.shape[:2]) if labels is None else np.asarray(labels).reshape(1, -1)
        if box_arr is not None and len(box_arr) > 1:
            raise ValueError("points combine with at most one box")
        return predictor.predict(points=pts, labels=lab, boxes=box_arr, multimask=multimask).regions()
    return predictor.predict(boxes=box_arr, multimask=multimask).regions()


def segment_document(pages: Iterable[np.ndarray | PageImage], predictor: Any, **options: Any) -> Document:
    """:func:`segment_image` over pages, as a :class:`Document`."""
    return Document(pages=[segment_image(p, predictor, **options) for p in pages])
