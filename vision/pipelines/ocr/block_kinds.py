"""Block kinds from geometry and text: titles, headings, list items, captions, page headers and footers,
footnotes; everything else stays a paragraph.

Rules (heights relative to the page's median line height ``H``; positions relative to the page):

* a block whose first line is at least ``1.2 H`` high, followed by lower lines, is split there (a heading
  chained with its paragraph);
* **page header / footer**: at most two lines, lying entirely in the top or bottom ``margin`` of the page;
* **caption**: starts with ``Figure``/``Fig.``/``Table`` and a number;
* **list item**: starts with a bullet or an enumerator (``1.``, ``(a)``, ``iv)``); a block is split at each
  line that starts one;
* **footnote**: in the bottom 15% of the page, lines under ``0.85 H``, starting with a digit, ``*`` or ``†``;
* **title / heading**: at most three lines and twelve words, no ``label: value`` (a form field), and either
  ``>= 1.6 H`` (title) or ``>= 1.15 H`` high, or in capitals, or a numbered section heading
  (``2.1 Methods``) of at most eight words not ending with a full stop.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from vision.structures import Block, Line

__all__ = ["MARGIN", "classify_blocks"]

MARGIN = 0.07  # running heads and folios sit in the outer 7% of a page (A4/letter with 2 cm margins: ~7%)
_CAPTION = re.compile(r"^(fig(ure)?\.?|table|tab\.)\s*[0-9IVX]+", re.IGNORECASE)
_LIST = re.compile(r"^([-*+\u2022\u00b7\u25aa\u25cf\u2013]|\(?\d{1,2}[.)]|\(?[a-z][.)]|\(?[ivx]{1,4}[.)])$")
_NUMBERED = re.compile(r"^(\d+(\.\d+)*\.?|[IVX]+\.|[A-Z]\.)$")
_FIELD = re.compile(r"\S:\s*\S")  # "Date: 9/3/92": a form field, not a heading
_NOTE = re.compile(r"^([0-9]+|\*|\u2020|\u2021)")


def _height(line: Line) -> float:
    g = line.geometry
    return 0.0 if g is None else g[3] - g[1]


def _split(block: Block, body: float) -> list[Block]:
    """Split a heading off the top of its block, and a block at each line starting a list item."""
    parts: list[list[Line]] = [[]]
    for k, line in enumerate(block.lines):
        first = line.words[0].value if line.words else ""
        tall_then_body = k == 1 and _height(block.lines[0]) >= 1.2 * body and _height(line) < 1.2 * body
        if parts[-1] and (tall_then_body or _LIST.match(first)):
            parts.append([])
        parts[-1].append(line)
    return [Block(p, kind=block.kind) for p in parts] if len(parts) > 1 else [block]


def _kind(block: Block, body: float) -> str:
    words = [w.value for ln in block.lines for w in ln.words]
    if not words or block.geometry is None:
        return block.kind
    _, y0, _, y1 = block.geometry
    n = len(block.lines)
    height = float(np.median([_height(ln) for ln in block.lines]))
    text = " ".join(words)
    if n <= 2 and y1 <= MARGIN:
        return "page_header"
    if n <= 2 and y0 >= 1 - MARGIN:
        return "page_footer"
    if _CAPTION.match(text):
        return "caption"
    if _LIST.match(words[0]) and len(words) > 1:
        return "list_item"
    if y0 >= 0.85 and height <= 0.85 * body and _NOTE.match(text):
        return "footnote"
    if n > 3 or len(words) > 12 or _FIELD.search(text):
        return "paragraph"
    if height >= 1.6 * body:
        return "title"
    if height >= 1.15 * body or _capitals(text):
        return "heading"
    numbered = _NUMBERED.match(words[0]) and 1 < len(words) <= 8 and words[1][:1].isupper()
    if numbered and not text.endswith("."):
        return "heading"
    return "paragraph"


def _capitals(text: str) -> bool:
    """At least two words and four letters, nine letters in ten upper case (``QUALITY IMPROVEMENT FORM``)."""
    letters = [c for c in text if c.isalpha()]
    upper = sum(c.isupper() for c in letters)
    return len(text.split()) >= 2 and len(letters) >= 4 and upper >= 0.9 * len(letters)


def classify_blocks(blocks: list[Block]) -> list[Block]:
    """Blocks (reading order, relative geometry) with their ``kind`` set; tables and figures are kept."""
    heights = [_height(ln) for b in blocks for ln in b.lines if ln.words]
    if not heights:
        return blocks
    body = float(np.median(heights))
    out = []
    for block in blocks:
        if block.kind in ("table", "figure", "formula"):
            out.append(block)
            continue
        for part in _split(block, body):
            out.append(replace(part, kind=_kind(part, body)))
    return out
