"""The one geometry convention of `vision.structures`.

Coordinates are relative to the page, in [0, 1]: ``x`` grows to the right, ``y`` downwards.
A box is ``(x0, y0, x1, y1)`` (axis-aligned, ``x0 <= x1``, ``y0 <= y1``); a polygon is four ``(x, y)``
points clockwise from the top-left corner (torchvision's ``XYXYXYXY`` order).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["BBox", "Polygon", "union_box", "polygon_to_box", "box_to_polygon", "clip_box", "box_to_pixels"]

BBox = tuple[float, float, float, float]
Polygon = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]


def clip_box(box: Sequence[float]) -> BBox:
    """Clamp a box to the page and order its corners."""
    x0, y0, x1, y1 = (min(max(float(v), 0.0), 1.0) for v in box)
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


def union_box(boxes: Iterable[Sequence[float]]) -> BBox:
    """Smallest box containing all ``boxes`` (raises ``ValueError`` when there are none)."""
    boxes = list(boxes)
    if not boxes:
        raise ValueError("union of no boxes")
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def polygon_to_box(polygon: Sequence[Sequence[float]]) -> BBox:
    """Axis-aligned box around a polygon."""
    xs = [p[0] for p in polygon]
    ys = [p[1] for p in polygon]
    return (min(xs), min(ys), max(xs), max(ys))


def box_to_polygon(box: Sequence[float]) -> Polygon:
    """Four corners of a box, clockwise from top-left."""
    x0, y0, x1, y1 = box
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def box_to_pixels(box: Sequence[float], dimensions: tuple[int, int]) -> tuple[int, int, int, int]:
    """Relative box to integer pixel ``(x0, y0, x1, y1)`` on a ``(height, width)`` page, clamped and ordered.

    Exporters that speak pixels (hOCR, ALTO) use this one rounding rule so their boxes agree.
    """
    height, width = dimensions
    x0, y0, x1, y1 = clip_box(box)
    return (round(x0 * width), round(y0 * height), round(x1 * width), round(y1 * height))
