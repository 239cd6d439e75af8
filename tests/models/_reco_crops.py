"""Real-looking word crops rendered in the tests (DejaVu fonts, Pillow): fixtures for recognition tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
WORDS = ("Invoice", "TOTAL:", "$12.50", "12/31/1995", "Approved", "the", "SUBTOTAL", "Phone", "(919)", "2,450",
         "Tobacco", "REPORT", "Date:", "Smith", "quality", "No.", "RESEARCH", "Filter", "52.7%", "Brown",
         "January", "COMPANY", "results", "1984", "Street", "DEPT.", "sample", "ADDRESS", "Market", "Paper")
FONTS = ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Bold.ttf")


def render_word(text: str, font: str = "DejaVuSans.ttf", size: int = 22, pad: int = 3, noise: float = 0.0,
                seed: int = 0) -> np.ndarray:
    """An RGB uint8 crop of ``text`` in dark ink on off-white paper with ``pad`` pixels of margin."""
    f = ImageFont.truetype(str(DEJAVU / font), size)
    x0, y0, x1, y1 = f.getbbox(text)
    img = Image.new("RGB", (x1 - x0 + 2 * pad, y1 - y0 + 2 * pad), (246, 244, 238))
    ImageDraw.Draw(img).text((pad - x0, pad - y0), text, font=f, fill=(20, 20, 25))
    arr = np.asarray(img).astype(np.float32)
    if noise:
        arr += np.random.default_rng(seed).normal(0, noise, arr.shape[:2])[..., None]
    return np.clip(arr, 0, 255).astype(np.uint8)


def word_set(n: int = 60) -> tuple[list[np.ndarray], list[str]]:
    """``n`` crops cycling through words, fonts and sizes (16-28 px), with light scanner noise."""
    crops, texts = [], []
    for i in range(n):
        text = WORDS[i % len(WORDS)]
        crops.append(render_word(text, FONTS[i % len(FONTS)], 16 + (i * 5) % 13, noise=4.0, seed=i))
        texts.append(text)
    return crops, texts
