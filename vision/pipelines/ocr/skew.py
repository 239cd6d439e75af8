"""How the text lines of a straight-box page run, from the directions of its detected words, for the layout.

A phone photo of a receipt or a slightly turned scan is read with axis-aligned word boxes (the default,
``assume_straight_pages=True``), and the layout groups words into lines by vertical overlap. A line tilted by
a few degrees drifts by more than its height across the page, so an item and its price, or the two halves
of a row, fall into different lines and the exported text comes out of order. The detector's regions keep
each word's direction (:func:`vision.ops.db_postprocess.kernel_angle`), and :func:`level_map` turns them into
a map of the page under which its lines run level:

* a **rotation** when the words agree on one direction (a turned scan, a receipt photographed square on);
* a **perspective map** when the directions converge: a page photographed at an angle has lines that meet at
  a vanishing point, which is found as the point closest to every word's line (weighted least squares over
  the lines' homogeneous coordinates) and sent to infinity, then the lines are turned level.

The layout groups the boxes mapped so (:func:`level_boxes` of :func:`word_quads`: each straight box turned
back into the rotated rectangle of its word first); the words keep their measured boxes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SkewOptions", "level_map", "level_boxes", "weighted_median", "word_quads"]


@dataclass(frozen=True)
class SkewOptions:
    """When a page's word directions make a map.

    Attributes:
        min_words: least number of words with a direction (regions at least twice as long as high).
        min_angle: pages whose lines all run within this many degrees of level are left as they are (the
            layout's line linking follows them already).
        tolerance: degrees between a word's direction and the map's line through it that count as agreeing.
        min_agreement: least share of the words' weight (their widths) that must agree with the map.
        perspective_gain: a perspective map is used only when it agrees with this much more of the weight
            than the best single direction.
        near: vanishing points further than this many page diagonals from the centre are at infinity.
    """

    min_words: int = 8
    min_angle: float = 1.0
    tolerance: float = 2.0
    min_agreement: float = 0.6
    perspective_gain: float = 0.1
    near: float = 20.0


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The value at half the total weight of ``values`` sorted (robust to stray words)."""
    order = np.argsort(values)
    cum = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cum, cum[-1] / 2)])


def _fold(degrees: np.ndarray) -> np.ndarray:
    """Line directions folded into ``[-90, 90)`` (a line has no sense)."""
    return (np.asarray(degrees, dtype=np.float64) + 90.0) % 180.0 - 90.0


def _rotation(angle: float) -> np.ndarray:
    t = np.radians(-angle)
    return np.array([[np.cos(t), -np.sin(t), 0.0], [np.sin(t), np.cos(t), 0.0], [0.0, 0.0, 1.0]])


def _vanishing_point(centres: np.ndarray, angles: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Homogeneous ``[3]`` point closest (weighted least squares, unit norm) to the lines through ``centres``
    at ``angles`` degrees."""
    t = np.radians(angles)
    lines = np.stack([-np.sin(t), np.cos(t), np.sin(t) * centres[:, 0] - np.cos(t) * centres[:, 1]], axis=1)
    return np.linalg.svd(lines * np.sqrt(weights)[:, None], full_matrices=False)[2][-1]


def _directions_to(point: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Degrees of the lines from each centre to a homogeneous point (its direction when at infinity)."""
    if abs(point[2]) < 1e-12:
        return np.full(len(centres), float(np.degrees(np.arctan2(point[1], point[0]))))
    v = point[:2] / point[2]
    return np.degrees(np.arctan2(v[1] - centres[:, 1], v[0] - centres[:, 0]))


def _agreement(residual: np.ndarray, weights: np.ndarray, tolerance: float) -> float:
    return float(weights[np.abs(_fold(residual)) <= tolerance].sum() / weights.sum())


def level_map(
    angles: np.ndarray | None,
    boxes: np.ndarray,
    size: tuple[int, int],
    options: SkewOptions = SkewOptions(),
) -> np.ndarray | None:
    """``float[3, 3]`` map of page pixels under which the page's text lines run level, or ``None`` when they
    do already (within ``min_angle``) or the words do not agree on how they run (scene photos with text at
    many angles).

    Args:
        angles: ``float[N]`` word directions in degrees, NaN where a word has none; ``None``: no directions.
        boxes: ``float[N, 4]`` the words' pixel boxes.
        size: ``(height, width)`` of the page in pixels.
    """
    if angles is None:
        return None
    a = np.asarray(angles, dtype=np.float64).reshape(-1)
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    known = np.isfinite(a)
    if len(a) != len(b) or known.sum() < options.min_words:
        return None
    a, b = a[known], b[known]
    h, w = size
    scale = float(np.hypot(h, w)) or 1.0
    to_unit = np.array([[1 / scale, 0, -w / 2 / scale], [0, 1 / scale, -h / 2 / scale], [0, 0, 1.0]])
    centres = ((b[:, :2] + b[:, 2:]) / 2 - [w / 2, h / 2]) / scale
    weight = np.maximum(b[:, 2] - b[:, 0], 1e-9)

    median = weighted_median(a, weight)
    flat = _agreement(a - median, weight, options.tolerance)
    point = _vanishing_point(centres, a, weight)
    for _ in range(2):  # refit on the words that agree with it (stray boxes, a logo, a stamp)
        close = np.abs(_fold(a - _directions_to(point, centres))) <= 3 * options.tolerance
        if close.sum() < options.min_words:
            break
        point = _vanishing_point(centres[close], a[close], weight[close])
    towards = _fold(_directions_to(point, centres))
    converging = _agreement(a - towards, weight, options.tolerance)
    far = abs(point[2]) < 1e-12 or np.hypot(*(point[:2] / point[2])) > options.near
    outside = far or np.hypot(*(point[:2] / point[2])) > 1.0  # the page lies within half a diagonal of 0
    better = converging >= max(options.min_agreement, flat + options.perspective_gain)
    if not far and outside and better:
        if np.all(np.abs(towards) < options.min_angle):
            return None
        v = point[:2] / point[2]
        ab = -v / float(v @ v)
        send = np.array([[1.0, 0, 0], [0, 1.0, 0], [ab[0], ab[1], 1.0]])  # the vanishing point to infinity
        turn = _rotation(float(_fold(np.degrees(np.arctan2(v[1], v[0])))))
        return np.linalg.inv(to_unit) @ turn @ send @ to_unit
    if flat >= options.min_agreement and abs(median) >= options.min_angle:
        return np.linalg.inv(to_unit) @ _rotation(median) @ to_unit
    return None


def _apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    q = np.concatenate([points, np.ones(points.shape[:-1] + (1,))], axis=-1) @ matrix.T
    return q[..., :2] / q[..., 2:]


def level_boxes(quads: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``float[N, 4]`` axis-aligned boxes of pixel ``quads (float[N, 4, 2])`` mapped by ``matrix``."""
    q = _apply(np.asarray(matrix, dtype=np.float64), np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2))
    return np.concatenate([q.min(axis=1), q.max(axis=1)], axis=1)


def word_quads(boxes: np.ndarray, matrix: np.ndarray, max_angle: float = 30.0) -> np.ndarray:
    """``float[N, 4, 2]`` the rotated rectangles whose hulls are the axis-aligned pixel ``boxes`` of words
    that run as ``matrix`` levels them: a tilted word's box is as tall as the word is long (``H = w sin a + h
    cos a``), so each is solved for the word's own size along its line's direction at its centre. Boxes whose
    line runs steeper than ``max_angle``, or whose size does not solve (a mark), keep their corners."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    m = np.asarray(matrix, dtype=np.float64)
    centres = (b[:, :2] + b[:, 2:]) / 2
    ahead = _apply(np.linalg.inv(m), _apply(m, centres) + [1.0, 0.0])  # one level step along the line
    phi = np.arctan2(ahead[:, 1] - centres[:, 1], ahead[:, 0] - centres[:, 0])
    phi = (phi + np.pi / 2) % np.pi - np.pi / 2
    c, s = np.cos(phi), np.abs(np.sin(phi))
    big_w, big_h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    det = c * c - s * s
    with np.errstate(divide="ignore", invalid="ignore"):
        w = (big_w * c - big_h * s) / det
        h = (big_h * c - big_w * s) / det
    solved = (np.abs(phi) <= np.radians(max_angle)) & (w >= 1.0) & (h >= 1.0)
    along = np.stack([np.cos(phi), np.sin(phi)], axis=1) * np.where(solved, w, big_w)[:, None] / 2
    across = np.stack([-np.sin(phi), np.cos(phi)], axis=1) * np.where(solved, h, big_h)[:, None] / 2
    turned = np.stack([centres - along - across, centres + along - across,
                       centres + along + across, centres - along + across], axis=1)
    corners = b[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 4, 2)  # numpy only: the Ray driver imports this
    return np.where(solved[:, None, None], turned, corners)
