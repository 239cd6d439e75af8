"""Letter-spaced type: text drawn glyph by glyph with extra space after each character (receipt headers,
display type), for the synthetic page renderer (:class:`~vision.training.synth.pages.PageRenderer`)."""

from __future__ import annotations

import numpy as np
from PIL import ImageDraw, ImageFont

__all__ = ["draw_tracked", "tracked_length"]


def tracked_length(f: ImageFont.FreeTypeFont, text: str, tracking: float) -> float:
    """Advance of ``text`` drawn with ``tracking`` px after each character but the last (0: the font's own
    advance, kerning included)."""
    if not tracking:
        return f.getlength(text)
    return sum(f.getlength(ch) for ch in text) + tracking * max(len(text) - 1, 0)


def draw_tracked(draw: ImageDraw.ImageDraw, x: float, baseline: float, text: str, f: ImageFont.FreeTypeFont,
                 fill, tracking: float) -> tuple[float, float, float, float]:
    """Draw ``text`` glyph by glyph, ``tracking`` px apart; returns the union of the glyphs' ink boxes."""
    box = [np.inf, np.inf, -np.inf, -np.inf]
    for ch in text:
        draw.text((x, baseline), ch, font=f, fill=fill, anchor="ls")
        x0, y0, x1, y1 = draw.textbbox((x, baseline), ch, font=f, anchor="ls")
        if x1 > x0 and y1 > y0:
            box = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
        x += f.getlength(ch) + tracking
    return (box[0], box[1], box[2], box[3]) if box[2] > box[0] else (0.0, 0.0, 0.0, 0.0)
