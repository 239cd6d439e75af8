"""Pure numpy functions on axis-aligned boxes and 4-point polygons.

Conventions (see :mod:`vision.structures.geometry`): boxes are ``(x0, y0, x1, y1)``; polygons are four
``(x, y)`` points clockwise from the top-left corner (``y`` grows downwards, so "clockwise" on screen).
Functions work in any unit (pixels or relative) unless they say otherwise.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "box_area",
    "box_iou",
    "boxes_to_polygons",
    "polygons_to_boxes",
    "order_quad",
    "clip_boxes",
    "scale_boxes",
    "pixel_boxes",
    "corner_boxes",
    "row_order",
    "intersection_over_first",
]


def box_area(boxes: np.ndarray) -> np.ndarray:
    """Areas of ``boxes (float[N, 4])`` as ``float[N]`` (degenerate boxes give 0)."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return np.clip(boxes[:, 2] - boxes[:, 0], 0, None) * np.clip(boxes[:, 3] - boxes[:, 1], 0, None)


def _intersections(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise intersection areas ``float[N, M]`` of ``a (float[N, 4])`` and ``b (float[M, 4])``."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    w = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    h = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    return np.clip(w, 0, None) * np.clip(h, 0, None)


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU ``float[N, M]`` of ``a (float[N, 4])`` and ``b (float[M, 4])``; 0 where both are empty."""
    inter = _intersections(a, b)
    union = box_area(a)[:, None] + box_area(b)[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def intersection_over_first(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``float[N, M]``: the fraction of each box of ``a`` covered by each box of ``b`` (0 for empty ``a``)."""
    inter = _intersections(a, b)
    area = box_area(a)[:, None]
    return np.divide(inter, area, out=np.zeros_like(inter), where=area > 0)


def boxes_to_polygons(boxes: np.ndarray) -> np.ndarray:
    """``float[N, 4]`` boxes to ``float[N, 4, 2]`` polygons (clockwise from top-left)."""
    b = np.asarray(boxes).reshape(-1, 4)
    x0, y0, x1, y1 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    return np.stack(
        [np.stack([x0, y0], -1), np.stack([x1, y0], -1), np.stack([x1, y1], -1), np.stack([x0, y1], -1)],
        axis=1,
    )


def polygons_to_boxes(polygons: np.ndarray) -> np.ndarray:
    """Axis-aligned boxes ``float[N, 4]`` around ``polygons (float[N, K, 2])``."""
    p = np.asarray(polygons)
    if p.size == 0:
        return np.zeros((0, 4), dtype=p.dtype if p.dtype.kind == "f" else np.float32)
    return np.concatenate([p.min(axis=1), p.max(axis=1)], axis=1)


def order_quad(quad: np.ndarray) -> np.ndarray:
    """Reorder 4 points ``float[4, 2]`` clockwise (on screen) starting from the top-left corner.

    Points are sorted by angle around their centroid; the start is the point with the smallest ``x + y``
    (the top-left for any rotation below 45 degrees).
    """
    q = np.asarray(quad, dtype=np.float64).reshape(4, 2)
    c = q.mean(axis=0)
    order = np.argsort(np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0]))  # y down: increasing angle is clockwise
    q = q[order]
    start = int(np.argmin(q[:, 0] + q[:, 1]))
    return np.roll(q, -start, axis=0)


def clip_boxes(boxes: np.ndarray, width: float = 1.0, height: float = 1.0) -> np.ndarray:
    """Clamp ``boxes (float[N, 4])`` into ``[0, width] x [0, height]``."""
    b = np.array(boxes, dtype=np.float64 if np.asarray(boxes).dtype.kind != "f" else None).reshape(-1, 4)
    b[:, 0::2] = np.clip(b[:, 0::2], 0, width)
    b[:, 1::2] = np.clip(b[:, 1::2], 0, height)
    return b


def scale_boxes(boxes: np.ndarray, sx: float, sy: float) -> np.ndarray:
    """Multiply x coordinates of ``boxes (float[N, 4])`` by ``sx`` and y coordinates by ``sy``."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return b * np.array([sx, sy, sx, sy])


def pixel_boxes(boxes: np.ndarray, height: int, width: int) -> np.ndarray:
    """Relative ``boxes (float[N, 4])`` as whole-pixel ``float[N, 4]`` boxes on a ``height x width`` image,
    rounded outwards, clamped to the image and at least 1 x 1 pixel (what :func:`~vision.ops.crops.box_crops`
    cuts)."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    x0 = np.clip(np.floor(b[:, 0] * width), 0, width - 1)
    y0 = np.clip(np.floor(b[:, 1] * height), 0, height - 1)
    x1 = np.maximum(np.clip(np.ceil(b[:, 2] * width), 0, width), x0 + 1)
    y1 = np.maximum(np.clip(np.ceil(b[:, 3] * height), 0, height), y0 + 1)
    return np.stack([x0, y0, x1, y1], axis=1)


def corner_boxes(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``float[N, 4]`` boxes spanned by opposite corners ``lo, hi (float[N, 2])``, ordered and clamped to the
    unit page."""
    lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    return np.concatenate([np.minimum(lo, hi), np.maximum(lo, hi)], axis=1)


def row_order(boxes: np.ndarray) -> list[int]:
    """Indices of ``boxes (float[N, 4])`` in row reading order (the scoring rule of ``../shared/data``).

    Boxes are taken by vertical centre; a box joins the current row when its vertical overlap with the row's
    first box is at least half the smaller of the two heights, else it opens a new row. Rows go top to
    bottom, boxes left to right within a row.
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    order = np.argsort((boxes[:, 1] + boxes[:, 3]) / 2, kind="stable")
    rows: list[list[int]] = []
    for i in order:
        if rows:
            first = boxes[rows[-1][0]]
            overlap = min(first[3], boxes[i, 3]) - max(first[1], boxes[i, 1])
            if overlap >= 0.5 * min(first[3] - first[1], boxes[i, 3] - boxes[i, 1]):
                rows[-1].append(int(i))
                continue
        rows.append([int(i)])
    return [i for row in rows for i in sorted(row, key=lambda j: (boxes[j, 0], j))]
