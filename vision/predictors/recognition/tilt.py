"""Second readings of turned and slanted words: vertical text turned by 90 degrees (:func:`reread_turned`), and
slanted text straightened by a vertical shear (:func:`reread_slanted`); the most confident reading is kept.

A word photographed at an angle and cut along its axis-aligned box (a detector's straight box, or ICDAR
2015's crops) runs diagonally through the crop; the recognizer reads rows of height 32 and loses it. For a
line of slope ``s`` (pixels down per pixel right) in a crop of ``H x W``, the shear ``y' = y - s (x - W/2)``
makes it horizontal, and a band of about ``H - W |s|`` rows through the middle holds it.

Which crops: readings under ``below`` confidence whose ink says they slant. :func:`estimate_slope` shears the
crop's edge map (Sobel magnitude at a height of 40 px) by each slope of :data:`SLOPES` and measures the
fewest rows holding 80% of the edge mass; a crop slants when some non-zero slope needs fewer rows than
level. It is then read at that slope and its neighbours in :data:`SLOPES` (where the band stays at least 30%
of the crop's height and 6 px), and a second reading replaces the first when it is more confident and at
most one character shorter (never empty). The rule (the gate, ``below`` 0.7, the neighbours) was chosen on
synthetic crops, never on evaluation data: words on photographs rendered at camera resolution, some rotated
up to 35 degrees, against document, receipt and overlay words (``benchmarks/slanted_words.py``;
``docs/models/recognition.md``, *Slanted words*).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np

__all__ = ["BELOW", "SLOPES", "estimate_slope", "reread_slanted", "reread_turned", "shear_band"]

SLOPES: tuple[float, ...] = (-0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
"""Slopes measured (tan of up to about 27 degrees, both ways)."""
BELOW = 0.7
"""Crops read with a lower confidence are candidates for a second reading."""
_MIN_BAND = 0.3  # of the crop's height
_MIN_ROWS = 6
_EST_HEIGHT = 40  # rows of the edge map the slope is measured on
_MASS = 0.8  # share of the edge mass the band must hold


def shear_band(crop: np.ndarray, slope: float) -> np.ndarray | None:
    """``crop`` (``H x W x C``) sheared so a line of ``slope`` through its centre runs level, cut to that
    line's band (``H - W |s|`` rows, plus 10% of it above and below); ``None`` when the band would be too thin.

    For a crop that hugs a rotated rectangle the line's band is ``(H - W |s|) (1 + s^2) / (1 - s^2)`` rows;
    the thinner cut read as well or better on the synthetic sets (``benchmarks/slanted_words.py``: scene
    words at camera resolution 57.73% against 57.53%, steeply rotated ones 33.33% against 32.60%)."""
    h, w = crop.shape[:2]
    band = h - w * abs(slope)
    if band < max(_MIN_BAND * h, _MIN_ROWS):
        return None
    m = np.float32([[1, 0, 0], [-slope, 1, slope * w / 2]])
    out = cv2.warpAffine(crop, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    cut = max(0, int((h - band) / 2 - 0.1 * band))
    return np.ascontiguousarray(out[cut:h - cut])


def _band_rows(profile: np.ndarray) -> int:
    """The fewest consecutive rows of ``profile`` (edge mass per row) holding :data:`_MASS` of its sum."""
    c = np.concatenate([[0.0], np.cumsum(profile, dtype=np.float64)])
    if c[-1] <= 0:
        return len(profile)
    ends = np.searchsorted(c, c[:-1] + _MASS * c[-1] - 1e-9)
    ok = ends <= len(profile)
    return int((ends[ok] - np.arange(len(profile))[ok]).min())


def estimate_slope(crop: np.ndarray) -> tuple[int, np.ndarray]:
    """``(k, rows)``: for each slope of :data:`SLOPES`, ``rows[j]`` is the band (rows of the crop scaled to a
    height of 40) holding 80% of the crop's edges once sheared by it; ``k`` indexes the most compact (the
    level slope on ties)."""
    h, w = crop.shape[:2]
    width = max(8, round(w * _EST_HEIGHT / max(h, 1)))
    grey = cv2.resize(crop, (width, _EST_HEIGHT), interpolation=cv2.INTER_AREA).astype(np.float32)
    if grey.ndim == 3:
        grey = cv2.cvtColor(grey, cv2.COLOR_RGB2GRAY)
    edges = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))
    pad = int(np.ceil(width * max(abs(s) for s in SLOPES) / 2)) + 1
    edges = np.pad(edges, ((pad, pad), (0, 0)))
    rows = np.empty(len(SLOPES), np.int64)
    for j, slope in enumerate(SLOPES):
        m = np.float32([[1, 0, 0], [-slope, 1, slope * width / 2]])
        sheared = cv2.warpAffine(edges, m, (width, edges.shape[0]), flags=cv2.INTER_LINEAR)
        rows[j] = _band_rows(sheared.sum(axis=1))
    level = SLOPES.index(0.0)
    k = int(np.argmin(rows))
    return (level if rows[k] >= rows[level] else k), rows


def reread_turned(
    read: Callable[[list[np.ndarray]], list[tuple[str, float]]],
    crops: Sequence[np.ndarray],
    results: list[tuple[str, float]],
    tall: np.ndarray,
) -> list[tuple[str, float]]:
    """``results`` with the crops flagged ``tall`` (vertical text) read again turned by 90 degrees both ways: a
    turned reading of 3+ characters replaces the upright one when 0.1 more confident (a blank or one-character
    upright reading counts as no evidence)."""
    results = list(results)
    tall_ids = np.flatnonzero(tall).tolist()
    for k in (1, 3) if tall_ids else ():  # 90 degrees counter-clockwise, then clockwise
        for i, (text, conf) in zip(tall_ids, read([np.ascontiguousarray(np.rot90(crops[i], k)) for i in tall_ids])):
            upright = results[i][1] if len(results[i][0]) >= 2 else 0.0
            if len(text) >= 3 and conf > upright + 0.1:
                results[i] = (text, conf)
    return results


def reread_slanted(
    read: Callable[[list[np.ndarray]], list[tuple[str, float]]],
    crops: Sequence[np.ndarray],
    results: list[tuple[str, float]],
    *,
    below: float = BELOW,
) -> list[tuple[str, float]]:
    """``results`` (the readings of ``crops``) with each unsure reading of a slanted crop replaced by the best
    sheared reading that beats it (see the module docstring). ``read`` reads a list of crops in one call."""
    results = list(results)
    todo = [i for i, (_, conf) in enumerate(results) if conf < below]
    keys, bands = [], []
    level = SLOPES.index(0.0)
    for i in todo:
        k, _ = estimate_slope(crops[i])
        if k == level:
            continue
        for slope in SLOPES[max(0, k - 1):k + 2]:
            band = shear_band(crops[i], slope) if slope else None
            if band is not None:
                keys.append(i)
                bands.append(band)
    if not bands:
        return results
    first = {i: results[i] for i in todo}
    for i, (text, conf) in zip(keys, read(bands)):
        if conf > results[i][1] and len(text) >= max(1, len(first[i][0]) - 1):
            results[i] = (text, conf)
    return results
