"""Searchable PDF: each page image full-page, under an invisible text layer placed on the words.

Each word is drawn in text render mode 3 (invisible) with a font size that makes the font's
ascent-to-descent span the box height and a horizontal scaling that makes the word span the box
width, so PDF readers select, search and extract it exactly where it was seen. Words with a rotated
``polygon`` are drawn along its top edge. The text layer uses an embedded TrueType font (DejaVu Sans
by default) so any Latin, Greek or Cyrillic text round-trips; without one, Latin-1 text falls back to
the core Helvetica font and anything else is refused with a clear error. Characters the font lacks
(CJK with DejaVu) are left out of the text layer, with a warning logged by fpdf2: pass ``font_path`` to a
font that covers the script.
"""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import numpy as np
from fpdf import FPDF
from fpdf.fonts import TTFFont
from PIL import Image

from vision._atomic import write_atomically
from vision.export._xml import SOFTWARE, VERSION
from vision.structures.document import Document, Page, Word

__all__ = ["save_pdf", "pdf_bytes", "find_unicode_font"]

_SYSTEM_FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",  # Debian, Ubuntu (fonts-dejavu-core)
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",  # Fedora
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",  # older Fedora, Alpine
    "/usr/share/fonts/TTF/DejaVuSans.ttf",  # Arch
)
_FAMILY = "textlayer"
# Helvetica's FontBBox top and bottom (931, -225 per 1000): pdfium's character boxes for the core font span
# exactly this range (measured), while the AFM Ascender/Descender (718, -207) left words 25 % too tall.
_HELVETICA = ("helvetica", 0.931, -0.225)
_MIN_ANGLE = 0.5  # degrees: below this a polygon is drawn as its axis-aligned box


def find_unicode_font() -> Path | None:
    """The first DejaVu Sans found on the system or in matplotlib's data, else ``None``."""
    candidates = [Path(p) for p in _SYSTEM_FONTS]
    spec = importlib.util.find_spec("matplotlib")  # locates the package without importing it
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidates.append(Path(location) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf")
    return next((p for p in candidates if p.is_file()), None)


def save_pdf(
    doc: Document,
    path: str | os.PathLike[str],
    *,
    dpi: float = 150.0,
    font_path: str | os.PathLike[str] | None = None,
) -> None:
    """Write ``doc`` as a searchable PDF at ``path``, atomically (temporary file, then ``os.replace``).

    Args:
        doc: pages with ``dimensions``; ``Page.image`` (RGB ``H x W x 3`` uint8) is drawn full-page,
            a missing image leaves the page white.
        path: output file.
        dpi: pixels per inch of the page images: a page is ``W * 72 / dpi`` points wide.
        font_path: TrueType font for the text layer (default: :func:`find_unicode_font`).

    Raises:
        FileNotFoundError: when ``font_path`` is missing, or no Unicode font is found and the text is
            not Latin-1.
        ValueError: for a non-positive ``dpi`` or a page with empty dimensions.
    """
    write_atomically(path, pdf_bytes(doc, dpi=dpi, font_path=font_path))


def pdf_bytes(doc: Document, *, dpi: float = 150.0, font_path: str | os.PathLike[str] | None = None) -> bytes:
    """The searchable PDF of :func:`save_pdf` as bytes (same arguments and errors)."""
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, got {dpi}")
    pdf = FPDF(unit="pt")
    pdf.set_creator(f"{SOFTWARE} {VERSION}")
    pdf.set_auto_page_break(False)
    pdf.set_margin(0)
    font = _set_up_font(pdf, doc, font_path)
    for page in doc.pages:
        _add_page(pdf, page, font, 72.0 / dpi)
    return bytes(pdf.output())


def _set_up_font(
    pdf: FPDF, doc: Document, font_path: str | os.PathLike[str] | None
) -> tuple[str, float, float]:
    """Register the text-layer font; return its family, ascent and descent per point of font size."""
    if font_path is not None and not Path(font_path).is_file():
        raise FileNotFoundError(f"text-layer font not found: {font_path}")
    font = Path(font_path) if font_path is not None else find_unicode_font()
    if font is not None:
        pdf.add_font(_FAMILY, fname=str(font))
        loaded = pdf.fonts[_FAMILY]
        assert isinstance(loaded, TTFFont)
        desc = loaded.desc
        return _FAMILY, desc.ascent / 1000, desc.descent / 1000
    try:
        "".join(w.value for w in doc.words()).encode("latin-1")
    except UnicodeEncodeError:
        raise FileNotFoundError(
            "no Unicode TrueType font found for the PDF text layer (looked for DejaVu Sans in "
            f"{', '.join(_SYSTEM_FONTS)} and matplotlib); install fonts-dejavu-core or pass font_path="
        ) from None
    return _HELVETICA  # core font: enough for Latin-1 text


def _add_page(pdf: FPDF, page: Page, font: tuple[str, float, float], scale: float) -> None:
    height, width = page.dimensions
    if height <= 0 or width <= 0:
        raise ValueError(f"page {page.page_idx} has empty dimensions {page.dimensions}")
    page_w, page_h = width * scale, height * scale
    pdf.add_page(format=(page_w, page_h))
    if page.image is not None:
        pdf.image(Image.fromarray(np.ascontiguousarray(page.image)), x=0, y=0, w=page_w, h=page_h)
    pdf.text_mode = "INVISIBLE"
    for word in page.words:
        text = " ".join(word.value.split())  # tabs and newlines have no glyph; keep them as spaces
        if text:
            _place_word(pdf, text, word, font, page_w, page_h)


def _place_word(
    pdf: FPDF, text: str, word: Word, font: tuple[str, float, float], page_w: float, page_h: float
) -> None:
    """Draw ``text`` so its ascent-descent box covers ``word``'s geometry (or its rotated polygon)."""
    x0, y0, x1, y1 = word.geometry
    origin, box_w, box_h, angle = (x0 * page_w, y0 * page_h), (x1 - x0) * page_w, (y1 - y0) * page_h, 0.0
    if word.polygon is not None:
        (px0, py0), (px1, py1), _, (px3, py3) = ((x * page_w, y * page_h) for x, y in word.polygon)
        rotation = math.degrees(math.atan2(py1 - py0, px1 - px0))
        if abs(rotation) >= _MIN_ANGLE:
            origin, angle = (px0, py0), -rotation  # fpdf2 turns counter-clockwise; page y grows downwards
            box_w, box_h = math.hypot(px1 - px0, py1 - py0), math.hypot(px3 - px0, py3 - py0)
    if box_w <= 0 or box_h <= 0:
        return
    family, ascent, descent = font  # ascent and descent per point of font size; descent < 0
    size = box_h / (ascent - descent)
    pdf.set_font(family, size=size)
    pdf.set_stretching(100.0)
    natural = pdf.get_string_width(text)
    pdf.set_stretching(100.0 * box_w / natural if natural > 0 else 100.0)
    baseline = (origin[0], origin[1] + ascent * size)
    if angle:
        with pdf.rotation(angle, x=origin[0], y=origin[1]):
            pdf.text(baseline[0], baseline[1], text)
    else:
        pdf.text(baseline[0], baseline[1], text)
