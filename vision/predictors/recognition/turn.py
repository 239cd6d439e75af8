"""Second readings of steeply rotated words: the crop turned so that its ink runs level, read both ways up.

A word photographed at 30 to 90 degrees and cut along its axis-aligned box (a detector's straight box, or
ICDAR 2015's crops) fills the crop's diagonal; neither the upright reading nor the shear of :mod:`.tilt`
(slopes up to 0.5) recovers it, and a turn by exactly 90 degrees only fits vertical text. Here the ink's
direction is measured (:func:`estimate_angle`: the edge map's pixels projected across each direction of
:data:`ANGLES`, the direction whose band holding 80% of the edge mass is thinnest), the crop is rotated by
it on a canvas that keeps every corner, cut to that band and the ink's extent along it (:func:`level_cut`),
and read as cut and turned by 180 degrees (a direction leaves the word's up side open).

Which crops: readings under ``below`` confidence, or of at most one character in a crop taller than wide
(a glyph read across a turned word is often confident, and counts as no evidence), whose ink runs at
:data:`MIN_ANGLE` degrees or more from level. A second reading replaces the first when it is more confident
and has at least two characters and no fewer than the first. The rule was chosen on synthetic scene words rotated by up to 90 degrees at
camera resolution, against the sets of ``benchmarks/slanted_words.py`` (``benchmarks/turned_words.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np

from vision.predictors.recognition.tilt import BELOW, band_rows

__all__ = ["ANGLES", "MIN_ANGLE", "estimate_angle", "level_cut", "reread_turned_ink"]

ANGLES: tuple[float, ...] = tuple(float(a) for a in range(-84, 91, 6))
"""Directions measured, in degrees (clockwise on the image, as y points down); -90 and 90 are the same."""
MIN_ANGLE = 30.0
"""Ink running closer to level is left to the shear of :mod:`.tilt`."""
MIN_ASPECT = 0.5
"""Crops lower than this times their width are left alone: a word of a few letters at 30 degrees or more has
an axis-aligned box at least about 0.6 times as high as wide."""
MARGIN = 0.0
"""How much more confident a turned reading must be."""
GLYPH_CONF = 0.8
"""The confidence a turned reading of 3+ characters needs to replace a confident glyph."""
GLYPH_ASPECT = 0.8
"""A reading of at most one character counts as no evidence in a crop taller than this times its width."""
_EST_SIDE = 64  # the longer side of the edge map the direction is measured on
_MARGIN = 0.3  # of the band's thickness, kept above and below it and before and after the ink


def _edges(crop: np.ndarray, side: int) -> np.ndarray:
    h, w = crop.shape[:2]
    scale = side / max(h, w, 1)
    size = (max(4, round(w * scale)), max(4, round(h * scale)))
    grey = cv2.resize(crop, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    grey = grey.astype(np.float32)
    if grey.ndim == 3:
        grey = cv2.cvtColor(grey, cv2.COLOR_RGB2GRAY)
    return cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))


def estimate_angle(crop: np.ndarray) -> float:
    """The direction (degrees, one of :data:`ANGLES`) along which the ink of ``crop`` (``H x W [x C]``)
    runs: the one across which 80% of the edge mass lies in the thinnest band (the most level on ties)."""
    edges = _edges(crop, _EST_SIDE)
    ys, xs = np.nonzero(edges > 0)
    if len(xs) < 8:
        return 0.0
    mass = edges[ys, xs].astype(np.float64)
    xs, ys = xs - xs.mean(), ys - ys.mean()
    best, best_rows = 0.0, np.inf
    for angle in sorted(ANGLES, key=abs):
        a = np.deg2rad(angle)
        across = -xs * np.sin(a) + ys * np.cos(a)
        bins = np.floor(across - across.min()).astype(np.int64)
        rows = band_rows(np.bincount(bins, weights=mass))
        if rows < best_rows:
            best, best_rows = angle, rows
    return best


def level_cut(crop: np.ndarray, angle: float) -> np.ndarray | None:
    """``crop`` rotated by ``angle`` degrees (counter-clockwise, undoing ink running at ``angle``) on a canvas
    holding all of it, cut to the band holding 80% of its edges and the ink's extent along it, with
    :data:`_MARGIN` of the band's thickness around; ``None`` when no ink is found."""
    h, w = crop.shape[:2]
    a = np.deg2rad(angle)
    cw = int(np.ceil(abs(w * np.cos(a)) + abs(h * np.sin(a))))
    ch = int(np.ceil(abs(w * np.sin(a)) + abs(h * np.cos(a))))
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    m[:, 2] += ((cw - w) / 2, (ch - h) / 2)
    turned = cv2.warpAffine(crop, m, (cw, ch), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    edges = _edges(turned, max(cw, ch))
    inside = cv2.warpAffine(np.ones((h, w), np.float32), m, (cw, ch), flags=cv2.INTER_NEAREST)
    edges = edges * (cv2.erode(inside, np.ones((3, 3), np.uint8)) > 0)  # the canvas's own border is no ink
    rows, cols = edges.sum(axis=1), edges.sum(axis=0)
    if rows.sum() <= 0:
        return None
    thick = band_rows(rows)
    c = np.cumsum(rows)
    top = int(np.argmax(c >= 0.1 * c[-1]))
    top = max(0, min(top, int(np.searchsorted(c, 0.5 * c[-1])) - thick // 2))
    cc = np.cumsum(cols)
    left, right = int(np.searchsorted(cc, 0.01 * cc[-1])), int(np.searchsorted(cc, 0.99 * cc[-1])) + 1
    pad = max(2, round(_MARGIN * thick))
    y0, y1 = max(0, top - pad), min(ch, top + thick + pad)
    x0, x1 = max(0, left - pad), min(cw, right + pad)
    if y1 - y0 < 4 or x1 - x0 < 4:
        return None
    return np.ascontiguousarray(turned[y0:y1, x0:x1])


def reread_turned_ink(
    read: Callable[[list[np.ndarray]], list[tuple[str, float]]],
    crops: Sequence[np.ndarray],
    results: list[tuple[str, float]],
    *,
    below: float = BELOW,
) -> list[tuple[str, float]]:
    """``results`` (the readings of ``crops``) with unsure readings of steeply rotated words replaced by the
    best reading of the crop turned level (see the module docstring)."""
    results = list(results)
    keys, cuts = [], []
    for i, (text, conf) in enumerate(results):
        h, w = crops[i].shape[:2]
        if h < MIN_ASPECT * w or not (conf < below or (h > GLYPH_ASPECT * w and len(text) <= 1)):
            continue
        angle = estimate_angle(crops[i])
        if abs(angle) < MIN_ANGLE:
            continue
        cut = level_cut(crops[i], angle)
        if cut is not None:
            keys += [i, i]
            cuts += [cut, np.ascontiguousarray(cut[::-1, ::-1])]
    if not cuts:
        return results
    first = {i: results[i] for i in keys}
    for i, (text, conf) in zip(keys, read(cuts)):
        text0, conf0 = first[i]
        if conf0 >= below:  # a confident glyph across a tall crop: a word must be read, and confidently
            better = len(text) >= 3 and conf >= GLYPH_CONF
        else:
            better = len(text) >= max(2, len(text0)) and conf > conf0 + MARGIN
        if better and conf > (results[i][1] if results[i] != first[i] else 0.0):
            results[i] = (text, conf)
    return results
