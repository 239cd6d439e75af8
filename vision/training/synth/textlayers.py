"""Shared pieces of the scene, overlay and receipt generators: font choice, text layers, warps, compositing.

A *layer stack* is a float32 ``H x W x K`` array of coverages in [0, 1] (fill, outline, shadow, panel...):
the generators render text once, build the other layers from it (dilate, blur, shift), warp the stack as one
image (so every layer moves together), then composite colours over a background with
:func:`composite`. Everything takes an ``np.random.Generator``, so a seed fixes the sample.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.models.recognition.vocab import CHECKBOX_CHECKED, CHECKBOX_EMPTY, VOCAB
from vision.predictors.recognition.preprocess import HEIGHT, resize_to_height
from vision.training.synth.corpus import TextSampler
from vision.training.synth.fonts import FontInfo, font_covers
from vision.training.synth.glyphs import GlyphCache

__all__ = ["FontPool", "case_variant", "composite", "curve", "finish", "homography_crop", "stack_layers"]

_BOXES = {CHECKBOX_EMPTY, CHECKBOX_CHECKED}


class FontPool:
    """Fonts with their vocabulary coverage and style tags; picks one that draws a text (weighted by style)."""

    def __init__(self, fonts: Sequence[FontInfo], weights: dict[str, float] | None = None,
                 glyphs: GlyphCache | None = None) -> None:
        if not fonts:
            raise ValueError("no fonts given")
        self.paths = [str(f.path) for f in fonts]
        self.styles = [f.styles for f in fonts]
        self.coverage = [frozenset(font_covers(f.path, VOCAB)) for f in fonts]
        w = np.array([1.0 + sum(v for k, v in (weights or {}).items() if k in s) for s in self.styles])
        self.cum = np.cumsum(np.maximum(w, 1e-3))
        self.glyphs = glyphs if glyphs is not None else GlyphCache()  # (an empty cache is falsy)

    def pick(self, text: str, rng: np.random.Generator) -> int | None:
        needed = set(text) - _BOXES - {" "}
        for _ in range(12):
            i = min(int(np.searchsorted(self.cum, rng.random() * self.cum[-1], side="right")), len(self.paths) - 1)
            if needed <= self.coverage[i]:
                return i
        return None

    def mask(self, i: int, px: int, text: str, spacing: float = 0.0) -> np.ndarray:
        """The text's coverage (uint8) trimmed to its ink, with the font's full ascent..descent band kept."""
        m = self.glyphs.render(self.paths[i], px, text, spacing)
        x0, _, x1, _ = m.ink_box
        return m.mask[:, int(x0):int(np.ceil(x1))]


def case_variant(text: str, rng: np.random.Generator, upper: float = 0.4, title: float = 0.25) -> str:
    """Signs and captions are often all capitals or title case."""
    r = rng.random()
    if r < upper:
        return text.upper()
    if r < upper + title:
        return " ".join(w[:1].upper() + w[1:] for w in text.split(" "))
    return text


def pick_text(sampler: TextSampler, rng: np.random.Generator, max_chars: int = 18) -> str:
    for _ in range(6):
        t = sampler(rng)
        if t and not (set(t) & _BOXES) and len(t) <= max_chars:
            return t
    return "OPEN"


def stack_layers(mask: np.ndarray, margin: int, *, outline: int = 0, shadow: tuple[int, int, float] | None = None,
                 bold: int = 0, extra: int = 0) -> np.ndarray:
    """Layers ``[fill, outline, shadow, extra...]`` (uint8 coverage, 255 = full) of a text mask padded by
    ``margin`` px; ``outline``: stroke width in px (0: none); ``shadow``: ``(dx, dy, blur sigma)`` (None: none);
    ``extra`` empty layers for the caller (a sign panel). uint8 keeps the warps cheap."""
    m = cv2.copyMakeBorder(mask, margin, margin, margin, margin, cv2.BORDER_CONSTANT, value=0)
    if bold:
        m = cv2.dilate(m, np.ones((bold + 1, bold + 1), np.uint8))
    layers = np.zeros(m.shape + (3 + extra,), np.uint8)
    layers[..., 0] = m
    if outline:
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * outline + 1, 2 * outline + 1))
        layers[..., 1] = cv2.dilate(m, k)
    if shadow is not None:
        dx, dy, sigma = shadow
        src = layers[..., 1] if outline else m
        shifted = cv2.warpAffine(src, np.float32([[1, 0, dx], [0, 1, dy]]), (m.shape[1], m.shape[0]))
        layers[..., 2] = cv2.GaussianBlur(shifted, (0, 0), sigma) if sigma > 0.3 else shifted
    return layers


def curve(layers: np.ndarray, rng: np.random.Generator, amplitude: float) -> np.ndarray:
    """Bend the text along a sine arc (round signs, bottles, curled paper): rows shift by up to ``amplitude``."""
    h, w = layers.shape[:2]
    phase, freq = float(rng.uniform(0, np.pi)), float(rng.uniform(0.3, 1.0))
    xs = np.arange(w, dtype=np.float32)
    dy = amplitude * np.sin(np.pi * freq * xs / max(w, 1) + phase)
    map_x = np.broadcast_to(xs, (h, w)).astype(np.float32)
    map_y = (np.arange(h, dtype=np.float32)[:, None] + dy[None, :]).astype(np.float32)
    return cv2.remap(layers, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def homography_crop(layers: np.ndarray, box: tuple[float, float, float, float], rng: np.random.Generator, *,
                    degrees: float, persp: float, shear: float, margins: tuple[float, float, float, float],
                    out_height: int | None = None) -> tuple[np.ndarray, tuple[int, int]]:
    """Rotate/shear/perspective-warp the stack about the text box's centre and cut the axis-aligned hull of the
    warped box, widened by ``margins`` (left, top, right, bottom as fractions of the box height; negative cuts).
    Returns the warped crop of the stack and its size."""
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    a = np.deg2rad(degrees)
    rot = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    sh = np.array([[1, shear, 0], [0, 1, 0], [0, 0, 1]])
    src = np.float32([[-1, -1], [1, -1], [1, 1], [-1, 1]])
    dst = src + rng.uniform(-persp, persp, (4, 2)).astype(np.float32)
    ps = cv2.getPerspectiveTransform(src, dst)
    to_unit = np.array([[2 / bw, 0, -2 * cx / bw], [0, 2 / bh, -2 * cy / bh], [0, 0, 1]])
    from_unit = np.array([[bw / 2, 0, 0], [0, bh / 2, 0], [0, 0, 1]])
    m = rot @ sh @ from_unit @ ps @ to_unit  # box centre -> origin
    corners = np.array([[x0, y0, 1], [x1, y0, 1], [x1, y1, 1], [x0, y1, 1]], np.float64) @ m.T
    corners = corners[:, :2] / corners[:, 2:3]
    lo, hi = corners.min(0), corners.max(0)
    hh = max(1.0, bh)
    left, top, right, bottom = (v * hh for v in margins)
    ox, oy = lo[0] - left, lo[1] - top
    fw, fh = max(hi[0] + right - ox, 2.0), max(hi[1] + bottom - oy, 2.0)
    s = out_height / fh if out_height else 1.0
    w, h = max(int(np.ceil(fw * s)), 4), max(int(np.ceil(fh * s)), 4)
    m = np.array([[s, 0, -ox * s], [0, s, -oy * s], [0, 0, 1]]) @ m
    if layers.ndim == 3 and layers.shape[2] > 4:  # OpenCV warps at most 4 channels at once
        out = np.concatenate([_warp(layers[..., i:i + 4], m, w, h) for i in range(0, layers.shape[2], 4)], axis=2)
    else:
        out = _warp(layers, m, w, h)
    return out, (h, w)


def _warp(layers: np.ndarray, m: np.ndarray, w: int, h: int) -> np.ndarray:
    out = cv2.warpPerspective(layers, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                              borderValue=0)
    return out if out.ndim == 3 else out[..., None]


def composite(bg: np.ndarray, layers: Sequence[tuple[np.ndarray, np.ndarray, float]]) -> np.ndarray:
    """Paint ``(coverage HxW uint8 or float in [0, 1], colour 3 or HxWx3, opacity)`` layers over ``bg`` in order;
    returns float32 RGB."""
    out = bg.astype(np.float32)
    for cover, colour, opacity in layers:
        scale = opacity / 255.0 if cover.dtype == np.uint8 else opacity
        a = (cover.astype(np.float32) * scale)[..., None]
        out = out * (1 - a) + np.asarray(colour, np.float32) * a
    return out


def finish(img: np.ndarray, max_width: int, height: int = HEIGHT) -> np.ndarray | None:
    """Resize a finished crop (uint8 RGB) to the model height as the predictor does; None if far too wide."""
    out = resize_to_height(img, height)
    if out.shape[1] > max_width:
        if out.shape[1] > 1.5 * max_width:
            return None
        out = cv2.resize(out, (max_width, height), interpolation=cv2.INTER_AREA)
    return out


def to_camera(img: np.ndarray, rng: np.random.Generator, height: tuple[int, int], p_low: float = 0.6) -> np.ndarray:
    """Resample a rendered crop (float or uint8) to a camera/screen resolution of ``height`` rows (uint8)."""
    lo, hi = height
    mid = (lo + hi) // 2
    h = int(rng.integers(lo, mid) if rng.random() < p_low else rng.integers(mid, hi + 1))
    w = max(2, round(img.shape[1] * h / img.shape[0]))
    interp = cv2.INTER_AREA if h < img.shape[0] else cv2.INTER_LINEAR
    return np.clip(cv2.resize(img, (w, h), interpolation=interp), 0, 255).astype(np.uint8)
