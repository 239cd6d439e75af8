"""Unbending words on circular arcs (``vision.ops.curved``)."""

from __future__ import annotations

import numpy as np

from vision.ops.curved import centreline, fit_circle, resample, unbend


def _band(cx: float, cy: float, r: float, t: float, a0: float, a1: float, n: int = 24) -> np.ndarray:
    """A clockwise polygon around an annulus sector (radius ``r`` +- ``t / 2``, angles ``a0..a1`` degrees)."""
    a = np.deg2rad(np.linspace(a0, a1, n))
    outer = np.c_[cx + (r + t / 2) * np.cos(a), cy + (r + t / 2) * np.sin(a)]
    inner = np.c_[cx + (r - t / 2) * np.cos(a), cy + (r - t / 2) * np.sin(a)][::-1]
    return np.r_[outer, inner]


def test_fit_circle_and_centreline_find_the_arc() -> None:
    band = _band(200, 300, 150, 30, 220, 320)
    assert np.allclose(fit_circle(_band(200, 300, 150, 0, 0, 300)[:24]), (200, 300, 150), atol=1e-6)
    middle, thickness = centreline(band)
    assert abs(thickness - 30) < 3
    cx, cy, r = fit_circle(middle)
    assert abs(cx - 200) < 3 and abs(cy - 300) < 10 and abs(r - 150) < 10  # within 7% of the radius
    assert len(resample(np.array([[0, 0], [10, 0], [10, 10]]))) >= 30  # every pixel of the perimeter


def test_unbend_straightens_a_ring_of_stripes() -> None:
    """Radial stripes on an arc come out as vertical stripes in an upright strip: every column of the
    unbent crop is nearly one colour."""
    h, w = 400, 500
    yy, xx = np.mgrid[0:h, 0:w]
    angle = np.rad2deg(np.arctan2(yy - 300, xx - 250))
    image = np.where((np.floor(angle / 6) % 2).astype(bool)[..., None], 255, 0).astype(np.uint8).repeat(3, 2)
    crop = unbend(image, _band(250, 300, 150, 30, 225, 315))
    assert crop is not None and crop.shape[1] > 3 * crop.shape[0]
    columns = crop[:, :, 0].astype(float)
    assert np.median(columns.std(axis=0)) < 20  # columns follow the radii


def test_straight_and_degenerate_words_are_left_alone() -> None:
    image = np.full((100, 300, 3), 255, np.uint8)
    straight = np.array([[20, 40], [150, 40], [280, 40], [280, 60], [150, 60], [20, 60]], float)
    assert unbend(image, straight) is None  # no bend: read from its box
    assert unbend(image, straight[:4]) is None  # too few points
