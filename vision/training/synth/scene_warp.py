"""Geometry shared by the scene-page generators: an image layer and its DB label maps moved as one.

A *layer* is an RGB image (float32), an alpha (float32 coverage in [0, 1]) and the four DB target maps
of :func:`vision.training.losses.db.db_targets` (uint8), all in the layer's own axis-aligned frame, where
word boxes are exact rectangles. :func:`bend` curves a layer (text on an arc, a page's curl) with one
``cv2.remap``; :func:`place` warps it by a homography into a region of the canvas and composites it there.
Label maps follow the image pixel for pixel (nearest for the 0/1 maps, linear for the threshold map), so
rotated, perspective and curved words get exactly warped kernels and threshold bands: multi-oriented
words are trained as the quadrilaterals (or bent bands) they are, never as axis-aligned boxes.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.training.losses.db import THRESH_MIN

__all__ = ["Canvas", "Layer", "bend", "corner_jitter", "place", "similarity"]

_MAPS = ("gt", "mask", "thresh", "thresh_mask")
_FILL = {"gt": 0, "mask": 1, "thresh": round(THRESH_MIN * 255), "thresh_mask": 0}


@dataclass
class Layer:
    """An object in its own frame: ``rgb float32[h, w, 3]``, ``alpha float32[h, w]``, DB maps (uint8),
    word ``boxes``/``ignore`` (float32[N, 4] xyxy, its frame) for the quads reported with the page."""

    rgb: np.ndarray
    alpha: np.ndarray
    maps: dict[str, np.ndarray]
    boxes: np.ndarray
    ignore: np.ndarray


@dataclass
class Canvas:
    """The page being built: ``image float32[H, W, 3]``, its DB maps and the word quads placed so far."""

    image: np.ndarray
    maps: dict[str, np.ndarray]
    quads: list[np.ndarray]
    ignore: list[np.ndarray]
    taken: np.ndarray  # uint8[H, W]: 1 where an object already lies (placement avoids overlaps)

    @classmethod
    def empty(cls, background: np.ndarray) -> Canvas:
        h, w = background.shape[:2]
        maps = {k: np.full((h, w), v, np.uint8) for k, v in _FILL.items()}
        return cls(background.astype(np.float32), maps, [], [], np.zeros((h, w), np.uint8))


def similarity(angle_deg: float, scale: float, cx: float, cy: float, tx: float, ty: float) -> np.ndarray:
    """3x3: rotate by ``angle_deg`` and scale about ``(cx, cy)``, then move that point to ``(tx, ty)``."""
    a = np.deg2rad(angle_deg)
    c, s = np.cos(a) * scale, np.sin(a) * scale
    return np.array([[c, -s, tx - c * cx + s * cy], [s, c, ty - s * cx - c * cy], [0, 0, 1]], np.float64)


def corner_jitter(w: int, h: int, rng: np.random.Generator, strength: float) -> np.ndarray:
    """3x3 perspective: the layer's corners moved by up to ``strength`` of its size (a surface seen aslant)."""
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    d = rng.uniform(-strength, strength, (4, 2)) * np.float32([w, h])
    if rng.random() < 0.6:  # mostly a keystone: one side shorter than the other (turned away from the camera)
        k = rng.uniform(-strength, strength) * h
        d = np.float32([[0, k], [0, -k], [0, k], [0, -k]]) * np.float32([[1, 1], [1, 1], [1, -1], [1, -1]])
        d += rng.uniform(-strength / 4, strength / 4, (4, 2)) * np.float32([w, h])
    return cv2.getPerspectiveTransform(src, (src + d).astype(np.float32)).astype(np.float64)


def bend(layer: Layer, amount: float, vertical: bool = False) -> Layer:
    """Curve the layer along a parabola: the middle column moves by ``amount`` x height relative to the
    ends (negative: a smile). The layer grows to keep everything; ``vertical`` bends along y instead."""
    h, w = layer.alpha.shape
    n = w if not vertical else h
    t = (np.arange(n, dtype=np.float32) - (n - 1) / 2) / max((n - 1) / 2, 1)
    off = float(amount) * (h if not vertical else w) * (1 - t**2)  # 0 at the ends, amount*size mid
    lo, hi = float(min(off.min(), 0)), float(max(off.max(), 0))
    pad = int(np.ceil(hi - lo))
    if vertical:
        ys, xs = np.mgrid[0:h, 0 : w + pad].astype(np.float32)
        map_x, map_y = xs - (off[:, None] - lo), ys
    else:
        ys, xs = np.mgrid[0 : h + pad, 0:w].astype(np.float32)
        map_x, map_y = xs, ys - (off[None, :] - lo)

    def remap(a: np.ndarray, nearest: bool, fill: float) -> np.ndarray:
        interp = cv2.INTER_NEAREST if nearest else cv2.INTER_LINEAR
        return cv2.remap(a, map_x, map_y, interp, borderMode=cv2.BORDER_CONSTANT, borderValue=fill)

    maps = {k: remap(m, k != "thresh", _FILL[k]) for k, m in layer.maps.items()}
    # boxes stay approximate (the reported quads); the maps, which are trained, are exact
    shift = np.float32([0, -lo, 0, -lo]) if not vertical else np.float32([-lo, 0, -lo, 0])
    return Layer(remap(layer.rgb, False, 0), remap(layer.alpha, False, 0), maps,
                 layer.boxes + shift * 0.5, layer.ignore + shift * 0.5)


def _corners(boxes: np.ndarray) -> np.ndarray:
    b = np.asarray(boxes, np.float32).reshape(-1, 4)
    return np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1)


def place(canvas: Canvas, layer: Layer, matrix: np.ndarray, *, overlap: float = 0.05) -> bool:
    """Warp ``layer`` by ``matrix`` (layer frame -> canvas) and composite it; refuse (False) when its
    footprint leaves the canvas by more than half or overlaps earlier objects by more than ``overlap``."""
    H, W = canvas.maps["gt"].shape
    h, w = layer.alpha.shape
    corners = cv2.perspectiveTransform(np.float32([[[0, 0], [w, 0], [w, h], [0, h]]]), matrix)[0]
    x0, y0 = np.floor(corners.min(0)).astype(int)
    x1, y1 = np.ceil(corners.max(0)).astype(int)
    cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, W), min(y1, H)
    if cx1 - cx0 < 2 or cy1 - cy0 < 2 or (cx1 - cx0) * (cy1 - cy0) < 0.5 * (x1 - x0) * (y1 - y0):
        return False
    if canvas.taken[cy0:cy1, cx0:cx1].mean() > overlap:
        return False
    m = np.array([[1, 0, -cx0], [0, 1, -cy0], [0, 0, 1]], np.float64) @ matrix
    size = (cx1 - cx0, cy1 - cy0)

    def warp(a: np.ndarray, nearest: bool, fill: float) -> np.ndarray:
        interp = cv2.INTER_NEAREST if nearest else cv2.INTER_LINEAR
        return cv2.warpPerspective(a, m, size, flags=interp, borderMode=cv2.BORDER_CONSTANT, borderValue=fill)

    alpha = warp(layer.alpha, False, 0)
    region = canvas.image[cy0:cy1, cx0:cx1]
    region += (warp(layer.rgb, False, 0) - region) * alpha[..., None]
    cover = warp(np.ones((h, w), np.uint8), True, 0) > 0
    for k in _MAPS:
        dst = canvas.maps[k][cy0:cy1, cx0:cx1]
        dst[cover] = warp(layer.maps[k], k != "thresh", _FILL[k])[cover]
    canvas.taken[cy0:cy1, cx0:cx1] |= cover.astype(np.uint8)
    for src, dst in ((layer.boxes, canvas.quads), (layer.ignore, canvas.ignore)):
        if len(src):
            dst.extend(cv2.perspectiveTransform(_corners(src).reshape(1, -1, 2), matrix).reshape(-1, 4, 2))
    return True
