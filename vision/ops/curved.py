"""Words on circular arcs, unbent: a circle fitted to a word's outline, then a polar resampling of the page.

Curved text in documents and photos (stamps, seals, logos, bottle and can labels, arched shop signs) mostly
follows a circle. A word's outline (:func:`vision.ops.db_postprocess.outline`) runs along two concentric
arcs; the midpoints between them (:func:`centreline`) lie on one circle, whose least-squares fit (Kasa's
algebraic fit) gives the centre; the word then
spans an angle range and a radius range about it, and :func:`unbend` resamples that annulus sector into an
upright rectangle (columns along the arc, rows across it, the letters' tops towards the outer arc when the
word sits on the upper half of its circle, towards the centre when it sits on the lower half).
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = ["fit_circle", "resample", "centreline", "arc_span", "unbend"]


def fit_circle(points: np.ndarray) -> tuple[float, float, float]:
    """``(cx, cy, r)`` of the least-squares circle through ``points float[K, 2]`` (Kasa's fit)."""
    p = np.asarray(points, np.float64).reshape(-1, 2)
    a = np.c_[2 * p, np.ones(len(p))]
    b = (p**2).sum(axis=1)
    (cx, cy, c), *_ = np.linalg.lstsq(a, b, rcond=None)
    return float(cx), float(cy), float(np.sqrt(max(c + cx * cx + cy * cy, 0.0)))


def resample(polygon: np.ndarray, step: float = 1.0, *, closed: bool = True) -> np.ndarray:
    """Points every ``step`` pixels along ``polygon float[K, 2]`` (a closed polygon, or an open chain with
    ``closed=False``), so that each side counts by its length, not by how many vertices it kept."""
    p = np.asarray(polygon, np.float64).reshape(-1, 2)
    q = np.roll(p, -1, axis=0) if closed else p[1:]
    out = [a + (b - a) * t[:, None] for a, b in zip(p, q)
           for t in [np.arange(0, 1, step / max(np.hypot(*(b - a)), step))]]
    if not closed:
        out.append(p[-1:])
    return np.concatenate(out) if out else p


def centreline(polygon: np.ndarray) -> tuple[np.ndarray, float]:
    """Points along the middle of a band-shaped ``polygon float[K, 2]`` and the band's thickness.

    The polygon's two farthest vertices stand for the word's two ends and split its boundary into two
    chains, one along each side of the word; each point of the first chain (every pixel along it) is paired
    with the nearest point of the second, and the pairs' midpoints, where a pair is between half and 1.5 times
    the median long and a thickness away from the chain's ends (clear of the caps), trace the middle. The
    thickness is the median pair length."""
    v = np.asarray(polygon, np.float64).reshape(-1, 2)
    d = np.hypot(*(v[:, None, :] - v[None, :, :]).transpose(2, 0, 1))
    i, j = sorted(np.unravel_index(int(np.argmax(d)), d.shape))
    first, second = resample(v[i:j + 1], closed=False), resample(np.r_[v[j:], v[:i + 1]], closed=False)
    if len(first) < 2 or len(second) < 2:
        return np.zeros((0, 2)), 0.0
    gaps = np.hypot(*(first[:, None, :] - second[None, :, :]).transpose(2, 0, 1))
    nearest = gaps.argmin(axis=1)
    length = gaps[np.arange(len(first)), nearest]
    thickness = float(np.median(length))
    along = np.arange(len(first), dtype=np.float64)  # first is resampled every pixel: index = arc length
    keep = (length <= 1.5 * thickness) & (length >= 0.5 * thickness)  # not across a cap, not at a shared end
    keep &= (along >= thickness) & (along <= along[-1] - thickness)  # a thickness away from the ends' caps
    return (first[keep] + second[nearest[keep]]) / 2, thickness


def arc_span(points: np.ndarray, centre: tuple[float, float]) -> tuple[float, float, bool]:
    """``(theta0, theta1, upper)`` of ``points`` about ``centre``: the angle range (radians, ``theta0 <
    theta1``, unwrapped about the points' mean direction) and whether the word sits on the circle's upper
    half (image ``y`` grows downwards)."""
    p = np.asarray(points, np.float64).reshape(-1, 2) - centre
    angles = np.arctan2(p[:, 1], p[:, 0])
    mean = float(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean()))
    rel = (angles - mean + np.pi) % (2 * np.pi) - np.pi
    return mean + float(rel.min()), mean + float(rel.max()), bool(np.sin(mean) < 0)


def unbend(image: np.ndarray, outline: np.ndarray, *, min_sagitta: float = 0.5,
           max_sweep: float = np.deg2rad(300)) -> np.ndarray | None:
    """The word inside ``outline`` (``float[K, 2]`` pixel points of ``image``) resampled upright along its
    arc, or ``None`` when it is not worth it: too few points, a middle line that strays from its chord by less
    than ``min_sagitta`` times the word's thickness (a straight word reads as well from its box), a word
    standing on the side of its circle (neither half), or a sweep over ``max_sweep``."""
    pts = np.asarray(outline, np.float64).reshape(-1, 2)
    if len(pts) < 5:
        return None
    middle, thickness = centreline(pts)
    if len(middle) < 3:
        return None
    chord = middle[-1] - middle[0]
    normal = np.array([-chord[1], chord[0]]) / max(float(np.hypot(*chord)), 1e-9)
    if np.abs((middle - middle[0]) @ normal).max() < min_sagitta * thickness:
        return None  # the middle is a straight line: read from the box
    cx, cy, r = fit_circle(middle)
    if not np.isfinite(r) or r <= thickness:
        return None
    t0, t1, upper = arc_span(pts, (cx, cy))
    r_in, r_out = r - 0.6 * thickness, r + 0.6 * thickness  # the band, a little margin either side
    sweep = t1 - t0
    if r_out - r_in < 2 or sweep > max_sweep or abs(np.sin((t0 + t1) / 2)) < 0.5:
        return None
    width = max(2, int(round(sweep * r)))
    height = max(2, int(round(r_out - r_in)))
    theta = np.linspace(t0, t1, width) if upper else np.linspace(t1, t0, width)  # left to right on the page
    # letter tops first: the outer arc for a word on the upper half, the inner one on the lower half
    radius = np.linspace(r_out, r_in, height) if upper else np.linspace(r_in, r_out, height)
    map_x = (cx + radius[:, None] * np.cos(theta[None, :])).astype(np.float32)
    map_y = (cy + radius[:, None] * np.sin(theta[None, :])).astype(np.float32)
    return cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
