"""Receipts and tickets: thermal and dot-matrix print, fading, curl and low contrast.

* ``thermal``: grey-to-black print on white or slightly grey paper, ink that fades along the line and in
  streaks (a tired print head leaves white columns), sometimes over-dark and bleeding;
* ``dotmatrix``: each glyph redrawn as a grid of round dots (7-9 dots high) in a faded ribbon colour;
* ``laser``: plain dark print (invoices, tickets).

The paper then curls (the line bends), is photographed or scanned (perspective, uneven light, blur, noise,
JPEG) at a low resolution. Text is mostly upper case with prices, quantities and codes. Callable
``rng -> (HEIGHT x W x 3 uint8, text)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.predictors.recognition.preprocess import HEIGHT
from vision.training.synth import degrade as D
from vision.training.synth.corpus import TextSampler
from vision.training.synth.fonts import FontInfo
from vision.training.synth.glyphs import GlyphCache
from vision.training.synth.textlayers import FontPool, case_variant, curve, finish, pick_text, to_camera

__all__ = ["ReceiptRenderer", "ReceiptSynthConfig"]

_SIZES = (25, 28, 32, 36, 40)


@dataclass(frozen=True)
class ReceiptSynthConfig:
    height: int = HEIGHT
    max_width: int = 192
    modes: tuple[tuple[str, float], ...] = (("thermal", 0.55), ("dotmatrix", 0.25), ("laser", 0.2))
    camera_height: tuple[int, int] = (12, 36)
    p_upper: float = 0.65
    p_price: float = 0.25  # a price or quantity instead of a sampled text
    font_weights: tuple[tuple[str, float], ...] = (("mono", 4.0), ("typewriter", 2.0), ("sans", 1.0),
                                                   ("condensed", 1.0))


def _price(rng: np.random.Generator) -> str:
    v = f"{rng.integers(0, 1000)}.{rng.integers(0, 100):02d}"
    r = rng.random()
    if r < 0.3:
        return v
    if r < 0.5:
        return f"{rng.integers(1, 20)}x"
    if r < 0.65:
        return f"{rng.integers(1, 10)} @ {v}"
    if r < 0.8:
        return f"{['RM', '$', 'EUR', 'Kč', 'zł', '€'][int(rng.integers(6))]}{v}"
    return f"{v}{['', ' A', ' B', '*', 'T'][int(rng.integers(5))]}"


class ReceiptRenderer:
    """Callable ``rng -> (image, text)``."""

    def __init__(self, fonts: Sequence[FontInfo], sampler: TextSampler,
                 config: ReceiptSynthConfig = ReceiptSynthConfig(), glyphs: GlyphCache | None = None) -> None:
        self.config, self.sampler = config, sampler
        self.fonts = FontPool(fonts, dict(config.font_weights), glyphs)
        self.mode_names = [m for m, _ in config.modes]
        self.mode_cum = np.cumsum([w for _, w in config.modes])

    def __call__(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
        cfg = self.config
        for _ in range(8):
            if rng.random() < cfg.p_price:
                text = _price(rng)
            else:
                text = case_variant(pick_text(self.sampler, rng, 16), rng, upper=cfg.p_upper, title=0.1)
            mode = self.mode_names[min(int(np.searchsorted(self.mode_cum, rng.random() * self.mode_cum[-1],
                                                            side="right")), len(self.mode_names) - 1)]
            img = self.render(text, mode, rng)
            if img is not None:
                return img, text
        return np.full((cfg.height, 16, 3), 255, np.uint8), ""  # pragma: no cover

    def render(self, text: str, mode: str, rng: np.random.Generator) -> np.ndarray | None:
        cfg = self.config
        font = self.fonts.pick(text, rng)
        if font is None:
            return None
        px = int(_SIZES[int(rng.integers(len(_SIZES)))])
        mask = self.fonts.mask(font, px, text)
        if mask.size == 0 or mask.shape[1] < 2:
            return None
        ink = mask.astype(np.float32) / 255.0
        if mode == "dotmatrix":
            ink = _dots(ink, px, rng)
        my, mx = int(px * rng.uniform(0.05, 0.35)), int(px * rng.uniform(0.05, 0.5))
        ink = cv2.copyMakeBorder(ink, my, my, mx, mx, cv2.BORDER_CONSTANT, value=0)
        h, w = ink.shape
        if mode == "thermal":
            fade = np.linspace(rng.uniform(0.5, 1.0), rng.uniform(0.5, 1.0), w, dtype=np.float32)
            ink = ink * fade[None, :]
            if rng.random() < 0.4:  # dead print-head dots: thin white columns through the line
                cols = rng.integers(0, w, int(rng.integers(1, 4)))
                for c in cols:
                    ink[:, c:c + int(rng.integers(1, 3))] *= float(rng.uniform(0, 0.3))
            if rng.random() < 0.2:  # over-heated: thick, bleeding strokes
                ink = cv2.dilate(ink, np.ones((2, 2), np.uint8))
            colour = np.full(3, rng.uniform(0, 90), np.float32) + rng.normal(0, 6, 3).astype(np.float32)
        elif mode == "dotmatrix":
            colour = np.float32([rng.uniform(20, 90), rng.uniform(10, 70), rng.uniform(40, 130)])
            if rng.random() < 0.5:
                colour = np.full(3, rng.uniform(10, 90), np.float32)
            ink = ink * float(rng.uniform(0.55, 1.0))
        else:
            colour = np.full(3, rng.uniform(0, 50), np.float32)
        paper = np.full(3, rng.uniform(215, 255), np.float32) + rng.normal(0, 5, 3).astype(np.float32)
        if rng.random() < 0.3:  # carbon copies, coloured tickets
            paper = rng.uniform(170, 250, 3).astype(np.float32)
        grain = rng.normal(0, float(rng.uniform(0, 6)), (h, w)).astype(np.float32)[..., None]
        a = np.clip(ink, 0, 1)[..., None]
        img = (paper + grain) * (1 - a) + colour * a
        if rng.random() < 0.35:  # curled paper: the line bends
            img = curve(img.astype(np.float32), rng, float(rng.uniform(0.03, 0.15)) * h)
            img[img.sum(2) == 0] = paper
        img = np.clip(img, 0, 255).astype(np.uint8)
        if rng.random() < 0.5:
            img = D.perspective(img, rng, 0.03)
        if rng.random() < 0.5:
            img = D.illumination(img, rng, (0.1, 0.4))
        if rng.random() < 0.25:
            img = D.contrast(img, rng, (0.55, 0.95))
        img = to_camera(img, rng, cfg.camera_height)
        for p, op in ((0.3, D.gaussian_blur), (0.1, D.motion_blur), (0.5, D.gaussian_noise), (0.6, D.jpeg)):
            if rng.random() < p:
                img = op(img, rng)
        return finish(img, cfg.max_width, cfg.height)


def _dots(ink: np.ndarray, px: int, rng: np.random.Generator) -> np.ndarray:
    """Redraw coverage as a dot grid: sample the glyphs every ``pitch`` px and stamp a round dot where inked."""
    pitch = max(2, round(px / float(rng.uniform(8, 11))))
    h, w = ink.shape
    gh, gw = max(1, h // pitch), max(1, w // pitch)
    grid = (cv2.resize(ink, (gw, gh), interpolation=cv2.INTER_AREA) > 0.35).astype(np.float32)
    r = max(1, round(pitch * float(rng.uniform(0.35, 0.6))))
    dot = np.zeros((pitch, pitch), np.float32)
    cv2.circle(dot, (pitch // 2, pitch // 2), r, 1.0, -1)
    out = np.kron(grid, dot)
    out = cv2.GaussianBlur(out, (0, 0), 0.4 * pitch / 3 + 0.3)
    return np.clip(out, 0, 1)
