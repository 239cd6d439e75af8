"""Fast text rasterisation for synthetic data: glyph bitmaps cached per (font, size), composed with numpy.

Pillow re-rasterises every glyph on every ``draw.text`` call (about 50 us a glyph, 150+ us fixed cost a
call, measured here), which made it the bottleneck of the word generator. Word crops only need
left-to-right Latin text, so we rasterise each glyph once and place it by its advance width. Kerning pairs
and ligatures are dropped, an acceptable loss for OCR training data (typewriter and receipt fonts have
neither).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["Glyph", "GlyphCache", "TextMask"]


@dataclass(frozen=True)
class Glyph:
    """A glyph's coverage bitmap (uint8, 255 = ink), its offset from the pen position and its advance."""

    mask: np.ndarray
    dx: int  # left of the bitmap relative to the pen x
    dy: int  # top of the bitmap relative to the baseline (negative: above it)
    advance: float


@dataclass(frozen=True)
class TextMask:
    """Rendered text: ``mask`` (uint8 coverage), baseline row, and per-character ink boxes in mask pixels."""

    mask: np.ndarray
    baseline: int
    boxes: np.ndarray  # [len(text), 4] x0, y0, x1, y1 (empty glyphs such as spaces have x0 == x1)

    @property
    def ink_box(self) -> tuple[float, float, float, float]:
        """Union of the non-empty character boxes (the whole mask if there are none)."""
        b = self.boxes[self.boxes[:, 2] > self.boxes[:, 0]]
        if not len(b):
            return 0.0, 0.0, float(self.mask.shape[1]), float(self.mask.shape[0])
        return float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()), float(b[:, 3].max())


class GlyphCache:
    """Per-process cache of glyph bitmaps; ``render(path, size, text)`` -> :class:`TextMask`."""

    def __init__(self) -> None:
        self._fonts: dict[tuple[str, int], ImageFont.FreeTypeFont] = {}
        self._glyphs: dict[tuple[str, int, str], Glyph] = {}

    def font(self, path: str, size: int) -> ImageFont.FreeTypeFont:
        key = (path, size)
        if key not in self._fonts:
            self._fonts[key] = ImageFont.truetype(path, size, layout_engine=ImageFont.Layout.BASIC)
        return self._fonts[key]

    def glyph(self, path: str, size: int, ch: str) -> Glyph:
        key = (path, size, ch)
        g = self._glyphs.get(key)
        if g is None:
            font = self.font(path, size)
            x0, y0, x1, y1 = font.getbbox(ch, anchor="ls")
            w, h = max(x1 - x0, 0), max(y1 - y0, 0)
            if w and h:
                img = Image.new("L", (w, h), 0)
                ImageDraw.Draw(img).text((-x0, -y0), ch, font=font, fill=255, anchor="ls")
                mask = np.asarray(img)
            else:
                mask = np.zeros((0, 0), np.uint8)
            g = Glyph(mask, int(x0), int(y0), float(font.getlength(ch)))
            self._glyphs[key] = g
        return g

    def metrics(self, path: str, size: int) -> tuple[int, int]:
        """Font ascent and descent in pixels."""
        return self.font(path, size).getmetrics()

    def length(self, path: str, size: int, text: str, spacing: float = 0.0) -> float:
        """Advance width of ``text`` (plus ``spacing`` after every character)."""
        return sum(self.glyph(path, size, c).advance + spacing for c in text)

    def render(self, path: str, size: int, text: str, spacing: float = 0.0) -> TextMask:
        """Compose ``text`` on one baseline; ``spacing`` adds pixels between characters."""
        glyphs = [self.glyph(path, size, c) for c in text]
        ascent, descent = self.metrics(path, size)
        xs, pen = [], 0.0
        for g in glyphs:
            xs.append(int(pen) + g.dx)
            pen += g.advance + spacing
        left = min([0, *xs])
        top = min([-ascent, *(g.dy for g in glyphs)])
        right = max([int(pen) + 1, *(x + g.mask.shape[1] for x, g in zip(xs, glyphs))])
        bottom = max([descent, *(g.dy + g.mask.shape[0] for g in glyphs)])
        mask = np.zeros((bottom - top, right - left), np.uint8)
        boxes = np.zeros((len(glyphs), 4), np.float32)
        for i, (x, g) in enumerate(zip(xs, glyphs)):
            x, y = x - left, g.dy - top
            h, w = g.mask.shape
            if w and h:
                region = mask[y:y + h, x:x + w]
                np.maximum(region, g.mask, out=region)
            boxes[i] = (x, y, x + w, y + h)
        return TextMask(mask, -top, boxes)
