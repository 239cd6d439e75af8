"""The embedded text layer of a PDF page as words with page-relative boxes (pypdfium2 text page)."""

from __future__ import annotations

import ctypes
from typing import Any

from vision.io.page import TextLayerWord
from vision.structures.geometry import clip_box

__all__ = ["text_layer_words", "page_has_text"]

_SCALE = 1_000_000  # device size used to map page points to [0, 1] with FPDF_PageToDevice (int output)


def page_has_text(page: Any) -> bool:
    """Whether the page has any text characters (born-digital) without extracting them."""
    textpage = page.get_textpage()
    try:
        return textpage.count_chars() > 0
    finally:
        textpage.close()


def _to_relative(raw: Any, page: Any, x: float, y: float) -> tuple[float, float]:
    """Map a point in PDF user space to page-relative coordinates, honouring /Rotate and the crop box
    exactly as rendering does."""
    dx, dy = ctypes.c_int(), ctypes.c_int()
    raw.FPDF_PageToDevice(page, 0, 0, _SCALE, _SCALE, 0, x, y, ctypes.byref(dx), ctypes.byref(dy))
    return dx.value / _SCALE, dy.value / _SCALE


def _to_page_box(
    raw: Any, page: Any, box: tuple[float, float, float, float]
) -> tuple[float, float, float, float]:
    """A ``(left, bottom, right, top)`` box in PDF user space as a relative ``(x0, y0, x1, y1)`` page box."""
    left, bottom, right, top = box
    x0, y0 = _to_relative(raw, page, left, top)
    x1, y1 = _to_relative(raw, page, right, bottom)
    return clip_box((x0, y0, x1, y1))


def _same_line(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Two user-space ``(left, bottom, right, top)`` boxes overlap vertically by half the smaller height.

    Checked in PDF user space, where text runs horizontally whatever the page's /Rotate.
    """
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap >= 0.5 * min(a[3] - a[1], b[3] - b[1])


def text_layer_words(page: Any) -> list[TextLayerWord]:
    """Words of ``page`` (a ``pypdfium2.PdfPage``) in content order, each with its box in ``[0, 1]``.

    Characters are grouped into words at whitespace, at characters pdfium generates for line breaks
    and at a jump to another line. Boxes use pdfium's loose character boxes (font ascent to descent), the
    extent OCR word boxes cover. Pages without text (scans) return ``[]``.
    """
    import pypdfium2.raw as raw

    textpage = page.get_textpage()
    words: list[TextLayerWord] = []
    chars: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []

    def flush() -> None:
        if chars:
            box = (
                min(b[0] for b in boxes),
                min(b[1] for b in boxes),
                max(b[2] for b in boxes),
                max(b[3] for b in boxes),
            )
            words.append(TextLayerWord("".join(chars), _to_page_box(raw, page, box)))
            chars.clear()
            boxes.clear()

    try:
        for i in range(textpage.count_chars()):
            code = raw.FPDFText_GetUnicode(textpage, i)
            char = chr(code) if 0 < code < 0x110000 and not 0xD800 <= code <= 0xDFFF else ""
            if (
                not char
                or not char.isprintable()
                or char.isspace()
                or raw.FPDFText_IsGenerated(textpage, i) == 1
            ):
                flush()
                continue
            box = tuple(textpage.get_charbox(i, loose=True))
            if boxes and not _same_line(boxes[-1], box):
                flush()
            chars.append(char)
            boxes.append(box)
        flush()
    finally:
        textpage.close()
    return words
