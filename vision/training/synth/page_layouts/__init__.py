"""Page layouts for :class:`vision.training.synth.pages.PageRenderer`: one function per document kind.

Each ``layout(renderer, canvas, rng)`` draws onto the canvas through the renderer's primitives (which record
word boxes). Sizes are pixels of a page about 750 to 1300 px wide (~90 to 150 dpi for Letter/A4), so body
text of 8 to 24 px spans roughly 6 to 17 pt and headings reach 72 pt.
"""

from __future__ import annotations

import numpy as np

from vision.training.synth.page_layouts.columns import receipt, table
from vision.training.synth.page_layouts.documents import article, letter, slide
from vision.training.synth.page_layouts.forms import form, invoice

__all__ = ["page_size", "article", "letter", "form", "receipt", "table", "invoice", "slide"]


def page_size(rng: np.random.Generator, layout: str) -> tuple[int, int]:
    """``(width, height)`` in pixels for a page of ``layout``."""
    if layout == "receipt":
        w = int(rng.integers(330, 700))
        return w, int(w * rng.uniform(1.4, 3.2))
    if layout == "slide":
        w = int(rng.integers(900, 1400))
        return w, int(w / rng.choice([4 / 3, 16 / 9, 16 / 10]))
    w = int(rng.integers(720, 1300))
    return w, int(w * rng.uniform(1.25, 1.45))
