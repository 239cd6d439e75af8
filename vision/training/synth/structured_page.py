"""Pages with known structure, drawn with Pillow: a spanning title, text in N columns with a chosen gutter,
headings, list items, a ruled table, a page header and footer; each word with its box, its block's kind and
its place in the true reading order.

Used by the layout tests (two columns with a 5 mm gutter must be read column by column) and by
``benchmarks/reading_order.py``. Fonts: DejaVu (``fonts-dejavu-core``), else Pillow's default font.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["LOREM", "Element", "StructuredPage", "render_structured_page"]

LOREM = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "amber", "basil", "cedar", "dune", "ember", "fjord", "grove", "harbor", "island", "jasper", "kelp", "lagoon", "meadow", "nectar", "orchid", "pebble", "quartz", "river", "saffron", "thistle", "umber", "valley", "willow", "yarrow", "zephyr"]

_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


@dataclass
class Element:
    """One block to draw: ``kind`` (a ``BLOCK_KINDS`` name), its text, or ``rows`` for a table."""

    kind: str
    text: str = ""
    rows: list[list[str]] = field(default_factory=list)
    span: bool = False  # titles and tables: across all columns


@dataclass
class StructuredPage:
    """A drawn page: ``image (H, W, 3) uint8``; words as ``(text, (x0, y0, x1, y1) pixels, block index)`` in
    true reading order; ``kinds[i]`` the kind of block ``i``; ``tables`` the cell texts of each table."""

    image: np.ndarray
    words: list[tuple[str, tuple[int, int, int, int], int]]
    kinds: list[str]
    tables: list[list[list[str]]]

    def relative_boxes(self) -> np.ndarray:
        """``[N, 4]`` word boxes relative to the page size."""
        h, w = self.image.shape[:2]
        return np.array([b for _, b, _ in self.words], dtype=np.float64).reshape(-1, 4) / [w, h, w, h]

    def text(self) -> str:
        """The words in true reading order, joined by single spaces."""
        return " ".join(t for t, _, _ in self.words)


def _font(size: int, bold: bool = False) -> ImageFont.ImageFont:
    try:
        return ImageFont.truetype(_BOLD if bold else _FONT, size)
    except OSError:
        return ImageFont.load_default(size)


class _Painter:
    def __init__(self, size: tuple[int, int], dpi: int) -> None:
        self.img = Image.new("RGB", size, "white")
        self.draw = ImageDraw.Draw(self.img)
        self.dpi = dpi
        self.words: list[tuple[str, tuple[int, int, int, int], int]] = []
        self.kinds: list[str] = []

    def pt(self, points: float) -> int:
        return max(1, round(points * self.dpi / 72))

    def word(self, x: int, y: int, text: str, font: ImageFont.ImageFont) -> int:
        """Draw ``text`` at ``(x, y)`` (top of the line), record its ink box; returns its advance."""
        self.draw.text((x, y), text, fill="black", font=font)
        x0, y0, x1, y1 = self.draw.textbbox((x, y), text, font=font)
        self.words.append((text, (x0, y0, x1, y1), len(self.kinds)))
        return int(self.draw.textlength(text + " ", font=font))

    def flow(self, text: str, x: int, y: int, width: int, font: ImageFont.ImageFont, lead: int) -> int:
        """Fill ``text`` into lines of ``width`` from ``(x, y)``; returns the y below the last line."""
        cx = x
        for token in text.split():
            if cx > x and cx + font.getlength(token) > x + width:
                cx, y = x, y + lead
            cx += self.word(cx, y, token, font)
        return y + lead


@dataclass
class _Columns:
    """The text frame: ``count`` columns of ``width`` from ``left``, between ``top`` and ``bottom``."""

    left: int
    width: int
    gutter: int
    count: int
    top: int
    bottom: int
    col: int = 0
    low: int = 0  # the lowest y any column reached

    def flow(self, p: _Painter, text: str, y: int, font: ImageFont.ImageFont, lead: int, indent: int) -> int:
        """Fill ``text`` line by line, moving to the next column at the bottom (text that does not fit in
        the last column is left out); returns the y below it."""
        tokens = text.split()
        while tokens:
            if y + lead > self.bottom:
                if self.col + 1 >= self.count:
                    return y
                self.col, y = self.col + 1, self.top
            x = self.left + self.col * (self.width + self.gutter) + indent
            cx, line = x, 0
            while tokens and (line == 0 or cx + font.getlength(tokens[0]) <= x + self.width - indent):
                cx += p.word(cx, y, tokens.pop(0), font)
                line += 1
            y += lead
        return y


def render_structured_page(
    elements: list[Element],
    *,
    columns: int = 2,
    gutter_mm: float = 5.0,
    dpi: int = 150,
    font_pt: float = 10.0,
    header: str | None = None,
    footer: str | None = None,
    size_mm: tuple[float, float] = (210.0, 297.0),
) -> StructuredPage:
    """Draw ``elements`` in reading order: spanning ones across the page, the others flowed into
    ``columns`` columns (a column is filled to the bottom margin before the next starts).

    Args:
        gutter_mm: space between columns, in millimetres.
        header, footer: one line of text at the top and bottom margin (kinds ``page_header``/``page_footer``).
    """
    mm = dpi / 25.4
    w, h = round(size_mm[0] * mm), round(size_mm[1] * mm)
    p = _Painter((w, h), dpi)
    margin, gutter = round(20 * mm), round(gutter_mm * mm)
    body = _font(p.pt(font_pt))
    lead = round(p.pt(font_pt) * 1.25)
    col_w = (w - 2 * margin - (columns - 1) * gutter) // columns
    tables: list[list[list[str]]] = []
    if header:
        p.flow(header, margin, round(10 * mm), w - 2 * margin, _font(p.pt(font_pt * 0.8)), lead)
        p.kinds.append("page_header")
    frame = _Columns(margin, col_w, gutter, columns, margin, h - margin)
    y = margin
    for el in elements:
        if el.kind == "table":
            y = max(y, frame.low)
            y = _table(p, el.rows, margin, y, w - 2 * margin, body, lead)
            frame.top, frame.col = y, 0
            tables.append(el.rows)
            p.kinds.append("table")
            continue
        size = {"title": font_pt * 2, "heading": font_pt * 1.3}.get(el.kind, font_pt)
        font = _font(p.pt(size), bold=el.kind in ("title", "heading"))
        step = round(p.pt(size) * 1.25)
        if el.span:
            y = max(y, frame.low)
            y = p.flow(el.text, margin, y, w - 2 * margin, font, step) + lead
            frame.top, frame.col = y, 0
        else:
            indent = p.pt(size) if el.kind == "list_item" else 0
            y = frame.flow(p, el.text, y, font, step, indent) + lead // 2
            frame.low = max(frame.low, y)
        p.kinds.append(el.kind)
    if footer:
        p.flow(footer, margin, h - round(12 * mm), w - 2 * margin, _font(p.pt(font_pt * 0.8)), lead)
        p.kinds.append("page_footer")
    return StructuredPage(np.asarray(p.img), p.words, p.kinds, tables)


def _table(p: _Painter, rows: list[list[str]], x: int, y: int, width: int, font, lead: int) -> int:
    """A ruled table (top rule, rule under the header row, bottom rule), columns of equal width, at most
    ten text heights each."""
    n = max(len(r) for r in rows)
    cw = min(width // n, 10 * lead)
    width = cw * n
    p.draw.line((x, y, x + width, y), fill="black", width=2)
    y += lead // 3
    for r, row in enumerate(rows):
        for k, cell in enumerate(row):
            cx = x + k * cw + lead // 3
            for token in cell.split():
                cx += p.word(cx, y, token, font)
        y += lead
        if r == 0:
            p.draw.line((x, y, x + width, y), fill="black", width=1)
            y += lead // 3
    p.draw.line((x, y, x + width, y), fill="black", width=2)
    return y + lead
