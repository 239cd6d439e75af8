"""Screen and video text: subtitles, boxed captions, and UI text with sub-pixel anti-aliasing.

Three modes, each over a background that stands for a video frame or a window:

* ``subtitle``: white or yellow text with a dark outline and/or drop shadow over a photo (a film frame);
* ``caption``: text on a semi-transparent or opaque bar (news tickers, boxed captions, lower thirds);
* ``ui``: small UI text (10-18 px) on a flat light or dark theme colour, rendered with sub-pixel (RGB-stripe)
  anti-aliasing, as in screenshots.

Video frames are then scaled as a 1080p frame is to 480p or 720p (0.3-0.7x), re-encoded (JPEG at a low
quality stands in for the codec's blocks) and sometimes scaled back up for display. Callable
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
from vision.training.synth.photos import PhotoBank, contrasting, mean_colour
from vision.training.synth.textlayers import FontPool, composite, finish, pick_text, stack_layers

__all__ = ["OverlayRenderer", "OverlaySynthConfig"]

_SIZES = (25, 28, 32, 36, 40, 44)
_UI_SIZES = (16, 18, 20, 22)


@dataclass(frozen=True)
class OverlaySynthConfig:
    height: int = HEIGHT
    max_width: int = 192
    modes: tuple[tuple[str, float], ...] = (("subtitle", 0.4), ("caption", 0.25), ("ui", 0.35))
    p_phrase: float = 0.35  # two or three words in one crop (subtitle lines are cut into words less often)
    font_weights: tuple[tuple[str, float], ...] = (("sans", 3.0), ("bold", 1.0))


class OverlayRenderer:
    """Callable ``rng -> (image, text)``."""

    def __init__(self, fonts: Sequence[FontInfo], sampler: TextSampler, photos: PhotoBank,
                 config: OverlaySynthConfig = OverlaySynthConfig(), glyphs: GlyphCache | None = None) -> None:
        self.config, self.sampler, self.photos = config, sampler, photos
        self.fonts = FontPool(fonts, dict(config.font_weights), glyphs)
        self.mode_names = [m for m, _ in config.modes]
        self.mode_cum = np.cumsum([w for _, w in config.modes])

    def __call__(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
        for _ in range(8):
            text = pick_text(self.sampler, rng, 14)
            if rng.random() < self.config.p_phrase:
                text = f"{text} {pick_text(self.sampler, rng, 10)}"
            mode = self.mode_names[min(int(np.searchsorted(self.mode_cum, rng.random() * self.mode_cum[-1],
                                                            side="right")), len(self.mode_names) - 1)]
            img = self.render(text, mode, rng)
            if img is not None:
                return img, text
        return np.full((self.config.height, 16, 3), 0, np.uint8), ""  # pragma: no cover

    def render(self, text: str, mode: str, rng: np.random.Generator) -> np.ndarray | None:
        font = self.fonts.pick(text, rng)
        if font is None:
            return None
        if mode == "ui":
            img = self._ui(text, font, rng)
        else:
            img = self._video(text, font, mode, rng)
        return None if img is None else finish(img, self.config.max_width, self.config.height)

    def _video(self, text: str, font: int, mode: str, rng: np.random.Generator) -> np.ndarray | None:
        px = int(_SIZES[int(rng.integers(len(_SIZES)))])
        mask = self.fonts.mask(font, px, text)
        if mask.size == 0:
            return None
        outline = int(rng.integers(1, max(2, px // 12) + 1)) if mode == "subtitle" and rng.random() < 0.8 else 0
        shadow = (px * 0.06, px * 0.06, px * 0.04) if rng.random() < 0.4 else None
        mx, my = int(px * rng.uniform(0.1, 0.6)), int(px * rng.uniform(0.05, 0.35))
        margin = max(mx, my) + outline + 3
        layers = stack_layers(mask, margin, outline=outline, shadow=shadow)
        y0, y1 = margin - my, margin + mask.shape[0] + my
        x0, x1 = margin - mx, margin + mask.shape[1] + mx
        layers = layers[max(0, y0):y1, max(0, x0):x1]
        h, w = layers.shape[:2]
        bg = self.photos.patch(h, w, rng).astype(np.float32)
        if rng.random() < 0.3:  # dark scenes are common behind subtitles
            bg *= rng.uniform(0.2, 0.7)
        yellow = rng.random() < 0.25
        fill = np.float32([255, 230 + 25 * rng.random(), 40 * rng.random()]) if yellow else \
            np.full(3, 235 + 20 * rng.random(), np.float32)
        parts = []
        if mode == "caption":
            bar = np.ones((h, w), np.float32)
            colour = rng.uniform(0, 60, 3) if rng.random() < 0.7 else rng.uniform(0, 255, 3)
            parts.append((bar, colour.astype(np.float32), float(rng.uniform(0.5, 1.0))))
            under = colour
            if min(abs(float(mean_colour(np.full((1, 1, 3), under)) @ np.float32([0.3, 0.59, 0.11])) - 240), 255) < 80:
                fill = contrasting(under.astype(np.float32), rng, 90)
        if shadow is not None:
            parts.append((layers[..., 2], np.zeros(3, np.float32), 0.8))
        if outline:
            parts.append((layers[..., 1], rng.uniform(0, 40, 3).astype(np.float32), 1.0))
        parts.append((layers[..., 0], fill, 1.0))
        frame = np.clip(composite(bg, parts), 0, 255).astype(np.uint8)
        scale = float(rng.uniform(0.3, 0.75))  # 1080p -> 480p/720p
        small = cv2.resize(frame, (max(2, round(w * scale)), max(2, round(h * scale))), interpolation=cv2.INTER_AREA)
        small = D.jpeg(small, rng, (15, 70))
        if rng.random() < 0.4:  # the player scales the frame back up
            small = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
        return small

    def _ui(self, text: str, font: int, rng: np.random.Generator) -> np.ndarray | None:
        # Render at 3x the width, then fold each pixel's three sub-columns into R, G, B (sub-pixel AA).
        px = int(_UI_SIZES[int(rng.integers(len(_UI_SIZES)))])
        mask = self.fonts.mask(font, px, text)
        if mask.size == 0:
            return None
        target = float(rng.uniform(9, 16))  # screen text height in px
        scale = target / px
        h = max(4, round(mask.shape[0] * scale))
        w3 = max(6, round(mask.shape[1] * scale) * 3)
        cover = cv2.resize(mask, (w3, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
        if rng.random() < 0.7:
            cover = cv2.filter2D(cover, -1, np.float32([[1, 1, 1]]) / 3.0)  # the FIR filter of ClearType/FreeType
            rgb = cover.reshape(h, -1, 3)
        else:  # grey anti-aliasing
            g = cv2.resize(mask, (w3 // 3, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
            rgb = np.repeat(g[..., None], 3, axis=2)
        pad_y, pad_x = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        rgb = cv2.copyMakeBorder(rgb, pad_y, pad_y, pad_x, pad_x, cv2.BORDER_CONSTANT, value=0)
        dark = rng.random() < 0.35
        bg_colour = rng.uniform(15, 70, 3) if dark else rng.uniform(200, 255, 3)
        if rng.random() < 0.2:
            bg_colour = rng.uniform(0, 255, 3)  # accent buttons, coloured bars
        bg_colour = bg_colour.astype(np.float32)
        ink = contrasting(bg_colour, rng, 100)
        img = bg_colour * (1 - rgb) + ink * rgb
        out = np.clip(img, 0, 255).astype(np.uint8)
        if rng.random() < 0.5:
            out = D.jpeg(out, rng, (40, 95))
        if rng.random() < 0.2:  # a screen photographed or scaled
            out = D.gaussian_blur(out, rng, (0.3, 0.7))
        return out
