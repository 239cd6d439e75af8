"""Differentiable-binarization post-processing: a probability map to word boxes, as pure functions.

Pipeline (DBNet, Liao et al. 2020): :func:`binarize` the probability map, find the connected regions'
contours (OpenCV), score each region by its mean probability, grow ("unclip") each region back to the full
word box with :func:`unclip` (pyclipper polygon offset), then return straight boxes, or rotated 4-point
polygons on request, in coordinates relative to the map; on request too, each region's grown outline
simplified to at most :data:`MAX_OUTLINE_POINTS` points (:func:`outline`), which follows a word on a curved
baseline where a box or a rotated rectangle cannot. An outline is grown by the region's band thickness
(:func:`band_thickness`), not by the minimum-area rectangle's short side that boxes use: for a bent word that
side is the height of the bend.

Label convention this inverts (see ``vision.training.detection``): a word box of short side ``s`` is shrunk
by ``shrink * s`` on every side to make the probability target, so the kernel's short side is
``(1 - 2 * shrink) * s``. Growing a kernel of short side ``k`` by ``unclip_ratio * k`` restores the box when
``unclip_ratio = shrink / (1 - 2 * shrink)`` (0.5 for ``shrink = 0.25``), whatever the word's aspect ratio.
(DBNet's ``area * r / perimeter`` offset does this only for one aspect ratio.) The shipped default is
calibrated on held-out rendered pages, see docs/models/detection.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.ops.boxes import order_quad

__all__ = ["DBOptions", "DBBoxes", "MAX_OUTLINE_POINTS", "band_thickness", "binarize", "unclip", "outline",
           "region_score", "kernel_angle", "db_postprocess"]

_CLIPPER_SCALE = 8.0  # pyclipper works on integers: offset at 1/8 px precision
MAX_OUTLINE_POINTS = 32
"""Most points of a word's outline (:func:`outline`)."""


@dataclass(frozen=True)
class DBOptions:
    """Post-processing settings.

    Attributes:
        bin_thresh: probability above which a pixel belongs to a text kernel.
        box_thresh: minimum mean probability of a kept region.
        unclip_ratio: offset distance as a fraction of the kernel's short side (see module docstring).
        min_size: kernels whose short side is below this many pixels are dropped as noise.
        max_candidates: at most this many regions (largest first) are considered per page.
        pad: a further offset in pixels of the map, for label conventions that pad word boxes by a fixed
            few pixels around the ink (FUNSD's, per the evaluation README).
    """

    bin_thresh: float = 0.3
    box_thresh: float = 0.5
    unclip_ratio: float = 0.5
    min_size: float = 2.0
    max_candidates: int = 3000
    pad: float = 0.0


@dataclass(frozen=True)
class DBBoxes:
    """Words found on one map: ``boxes float32[N, 4]`` relative xyxy, ``scores float32[N]``,
    ``polygons float32[N, 4, 2]`` relative, clockwise from top-left; ``outlines`` (when asked) one
    ``float32[K, 2]`` relative polygon per word, clockwise, 4 <= K <= :data:`MAX_OUTLINE_POINTS`;
    ``angles float32[N]`` each region's direction in degrees (:func:`kernel_angle`, NaN where it has none),
    measured on the map, whose axes are the page's scaled alike."""

    boxes: np.ndarray
    scores: np.ndarray
    polygons: np.ndarray
    outlines: list[np.ndarray] | None = None
    angles: np.ndarray | None = None


def kernel_angle(rect: tuple) -> float:
    """Direction in degrees of a region's minimum-area rectangle (``cv2.minAreaRect``): the angle of its long
    side in ``[-45, 45]`` (positive: running down to the right), or NaN when the rectangle is less than twice
    as long as high (a glyph or a mark, whose rectangle says nothing of the line) or runs steeper than 45
    degrees."""
    (_, _), (rw, rh), turn = rect
    if max(rw, rh) < 2 * min(rw, rh):
        return float("nan")
    angle = turn if rw >= rh else turn + 90.0  # the rectangle's width runs at `turn` (cv2.boxPoints)
    angle = (angle + 90.0) % 180.0 - 90.0  # a line has no direction: fold into [-90, 90)
    return angle if abs(angle) <= 45.0 else float("nan")


def binarize(prob: np.ndarray, threshold: float) -> np.ndarray:
    """``uint8[H, W]`` mask (0/1) of ``prob (float[H, W])`` above ``threshold``."""
    if prob.ndim != 2:
        raise ValueError(f"expected a 2-D probability map, got shape {prob.shape}")
    return (prob > threshold).astype(np.uint8)


def unclip(polygon: np.ndarray, distance: float) -> np.ndarray:
    """Offset ``polygon (float[K, 2])`` outwards by ``distance`` (round joins); returns ``float[M, 2]``.

    Negative distances shrink. Returns an empty ``(0, 2)`` array when the polygon vanishes.
    """
    import pyclipper  # lazy: only post-processing and label tools need it

    pts = np.round(np.asarray(polygon, dtype=np.float64) * _CLIPPER_SCALE).astype(np.int64)
    offset = pyclipper.PyclipperOffset()
    offset.AddPath(pts.tolist(), pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    paths = offset.Execute(distance * _CLIPPER_SCALE)
    if not paths:
        return np.zeros((0, 2), dtype=np.float64)
    if len(paths) == 1:  # the usual case (growing gives one path): no areas to compare
        return np.asarray(paths[0], dtype=np.float64) / _CLIPPER_SCALE
    largest = max(paths, key=lambda p: abs(cv2.contourArea(np.asarray(p, dtype=np.float32))))
    return np.asarray(largest, dtype=np.float64) / _CLIPPER_SCALE


def outline(grown: np.ndarray, thickness: float, most: int = MAX_OUTLINE_POINTS) -> np.ndarray:
    """A grown region ``float[M, 2]`` simplified (Douglas-Peucker, ``cv2.approxPolyDP``) to a clockwise
    polygon of at most ``most`` points that strays from it by at most a tenth of the word's ``thickness``
    (its short side), or more where ``most`` points need it; ``float64[K, 2]``, ``K >= 4`` (a region that
    simplifies to fewer points gets its minimum-area rectangle)."""
    pts = np.asarray(grown, dtype=np.float32).reshape(-1, 1, 2)
    eps = max(0.1 * thickness, 0.5)
    approx = cv2.approxPolyDP(pts, eps, True)
    while len(approx) > most:
        eps *= 1.5
        approx = cv2.approxPolyDP(pts, eps, True)
    poly = approx.reshape(-1, 2).astype(np.float64)
    if len(poly) < 4:
        return order_quad(cv2.boxPoints(cv2.minAreaRect(pts))).astype(np.float64)
    x, y = poly[:, 0], poly[:, 1]
    if np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) < 0:  # y points down: clockwise is positive
        poly = poly[::-1]
    start = int(np.argmin(poly.sum(axis=1)))  # from the top-left-most point
    return np.roll(poly, -start, axis=0)


def band_thickness(contour: np.ndarray) -> float:
    """Thickness of a region read as a band of length ``L`` and thickness ``t`` (area ``L t``, perimeter
    ``2 (L + t)``): the smaller root of ``z^2 - (P / 2) z + A``. For a straight word it is the minimum-area
    rectangle's short side; for a word bent along an arc it stays the stroke band's thickness where the
    rectangle's short side grows to the height of the bend."""
    area = abs(cv2.contourArea(contour))
    half = cv2.arcLength(contour, True) / 2
    return float((half - np.sqrt(max(half * half - 4 * area, 0.0))) / 2)


def region_score(
    prob: np.ndarray, contour: np.ndarray, rect: tuple[int, int, int, int] | None = None
) -> float:
    """Mean of ``prob (float[H, W])`` over the pixels inside ``contour (int[K, 1, 2])``; ``rect`` is its
    ``cv2.boundingRect`` when the caller has it already."""
    x, y, w, h = rect if rect is not None else cv2.boundingRect(contour)
    mask = np.zeros((h, w), dtype=np.uint8)
    cv2.fillPoly(mask, [contour], 1, offset=(-x, -y))
    return float(cv2.mean(prob[y : y + h, x : x + w], mask=mask)[0])


def db_postprocess(
    prob: np.ndarray, params: DBOptions = DBOptions(), *, straight: bool = True, outlines: bool = False
) -> DBBoxes:
    """Word boxes from one probability map.

    Args:
        prob: ``float[H, W]`` text probabilities in [0, 1], covering exactly the page (padding removed).
        params: thresholds and unclip ratio.
        straight: ``True`` for axis-aligned boxes (polygons are their corners); ``False`` for minimum-area
            rotated rectangles as 4-point polygons (boxes are their axis-aligned hulls).
        outlines: also return each word's grown region as a polygon (:func:`outline`).

    Returns:
        :class:`DBBoxes` in coordinates relative to the map (x / W, y / H), sorted top-to-bottom.
    """
    prob = np.ascontiguousarray(prob, dtype=np.float32)
    h, w = prob.shape
    contours, _ = cv2.findContours(
        binarize(prob, params.bin_thresh), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
    )
    if len(contours) > params.max_candidates:
        contours = sorted(contours, key=cv2.contourArea, reverse=True)[: params.max_candidates]
    quads, scores, shapes, angles = [], [], [], []
    for contour in contours:
        rect = cv2.minAreaRect(contour)
        short = min(rect[1]) + 1.0  # contour points are pixel centres: one pixel wider
        if short < params.min_size:
            continue
        x, y, bw, bh = bounds = cv2.boundingRect(contour)
        score = region_score(prob, contour, bounds)
        if score < params.box_thresh:
            continue
        distance = params.unclip_ratio * short + params.pad
        shape = None
        if outlines:  # grown by the band thickness, not by `short` (see the module docstring)
            band = band_thickness(contour) + 1.0
            offset = params.unclip_ratio * band + params.pad
            shape = outline(unclip(contour.reshape(-1, 2) + 0.5, offset), band + 2 * max(offset, 0.0))
        if straight and distance >= 0:
            # Growing with round joins is the Minkowski sum with a disk: its bounding box is the region's,
            # `distance` wider on every side (what pyclipper returns up to its 1/8 px grid), at no cost.
            # The region's points span pixel centres x + 0.5 .. x + bw - 0.5 (boundingRect counts pixels).
            x0, y0 = x + 0.5 - distance, y + 0.5 - distance
            x1, y1 = x + bw - 0.5 + distance, y + bh - 0.5 + distance
            quads.append(((x0, y0), (x1, y0), (x1, y1), (x0, y1)))
            scores.append(score)
            shapes.append(shape)
            angles.append(kernel_angle(rect))
            continue
        grown = unclip(contour.reshape(-1, 2) + 0.5, distance)
        if len(grown) < 3:
            continue
        if straight:
            x0, y0 = grown.min(axis=0)
            x1, y1 = grown.max(axis=0)
            quad = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        else:
            quad = order_quad(cv2.boxPoints(cv2.minAreaRect(grown.astype(np.float32))))
        quads.append(quad)
        scores.append(score)
        shapes.append(shape)
        angles.append(kernel_angle(rect))
    if not quads:
        empty = np.zeros((0,), dtype=np.float32)
        return DBBoxes(np.zeros((0, 4), np.float32), empty, np.zeros((0, 4, 2), np.float32),
                       [] if outlines else None, empty)
    polys = np.asarray(quads, dtype=np.float64) / np.array([w, h])
    polys = np.clip(polys, 0.0, 1.0).astype(np.float32)
    boxes = np.concatenate([polys.min(axis=1), polys.max(axis=1)], axis=1)
    order = np.lexsort((boxes[:, 0], boxes[:, 1]))
    shaped = None
    if outlines:
        shaped = [np.clip(shapes[i] / [w, h], 0.0, 1.0).astype(np.float32) for i in order]
    return DBBoxes(boxes[order], np.asarray(scores, dtype=np.float32)[order], polys[order], shaped,
                   np.asarray(angles, dtype=np.float32)[order])
