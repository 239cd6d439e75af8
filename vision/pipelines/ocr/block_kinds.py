"""Block kinds from geometry and text: titles, headings, list items, captions, page headers and footers,
footnotes, display formulas; everything else stays a paragraph.

Rules (heights relative to the page's median line height ``H``; positions relative to the page):

* a block whose first line is at least ``1.2 H`` high, followed by lower lines, is split there (a heading
  chained with its paragraph);
* **page header / footer**: at most two lines, lying entirely in the top or bottom ``margin`` of the page;
* **caption**: starts with ``Figure``/``Fig.``/``Table`` and a number;
* **list item**: starts with a bullet or an enumerator (``1.``, ``(a)``, ``iv)``); a block is split at each
  line that starts one;
* **formula** (display math): at most two lines holding a relation (``=``, ``<``, ``\u2264``, ``\u2248``,
  ``\u2211``, ``\u222b``...) or ending with an equation number ``(3)``, where at least half the tokens are
  math (operators, Greek letters, single letters such as italic variables, numbers, ``f(x)``) and at most
  a quarter are words of three letters or more (``sin``, ``log``, ``exp``... do not count as words);
* **footnote**: in the bottom 15% of the page, lines under ``0.85 H``, starting with a digit, ``*`` or ``†``;
* **title / heading**: at most three lines and twelve words, no ``label: value`` (a form field), and either
  ``>= 1.6 H`` (title) or ``>= 1.15 H`` high, or in capitals, or a numbered section heading
  (``2.1 Methods``) of at most eight words not ending with a full stop.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from vision.ops.median import median
from vision.structures import Block, Line

__all__ = ["MARGIN", "classify_blocks", "is_formula"]

MARGIN = 0.07  # running heads and folios sit in the outer 7% of a page (A4/letter with 2 cm margins: ~7%)
_CAPTION = re.compile(r"^(fig(ure)?\.?|table|tab\.)\s*[0-9IVX]+", re.IGNORECASE)
_LIST = re.compile(r"^([-*+\u2022\u00b7\u25aa\u25cf\u2013]|\(?\d{1,2}[.)]|\(?[a-z][.)]|\(?[ivx]{1,4}[.)])$")
_NUMBERED = re.compile(r"^(\d+(\.\d+)*\.?|[IVX]+\.|[A-Z]\.)$")
_FIELD = re.compile(r"\S:\s*\S")  # "Date: 9/3/92": a form field, not a heading
_NOTE = re.compile(r"^([0-9]+|\*|\u2020|\u2021)")
_RELATION = set("=<>\u2264\u2265\u2248\u2260\u2261\u221d\u2208\u2192\u21d2\u2211\u222b\u220f")
_MATH = _RELATION | set("+\u2212-\u00d7\u00b7*/^_|\u221a\u221e\u2202\u00b1\u2207()[]{}")
_FUNCS = {"sin", "cos", "tan", "log", "ln", "exp", "lim", "max", "min", "det", "arg", "sup", "inf", "mod"}
_EQ_NUMBER = re.compile(r"^\(\d{1,3}[a-z]?\)$")
_PROSE = re.compile(r"^[^\W\d_]{3,}$")


def _math_token(token: str) -> bool:
    greek = any("\u0391" <= c <= "\u03c9" for c in token)
    return greek or any(c in _MATH for c in token) or len(token) == 1 or token.replace(".", "").isdigit()


def is_formula(words: list[str]) -> bool:
    """Whether the tokens of a short block read as display math (see the module docstring)."""
    if len(words) < 3:
        return False
    numbered = bool(_EQ_NUMBER.match(words[-1]))
    if not numbered and not any(c in _RELATION for w in words for c in w):
        return False
    core = words[:-1] if numbered else words
    prose = sum(bool(_PROSE.match(w.strip(".,;:"))) and w.strip(".,;:").lower() not in _FUNCS for w in core)
    math = sum(_math_token(w) for w in core)
    return 2 * math >= len(core) and 4 * prose <= len(core)


def _height(line: Line) -> float:
    g = line.geometry
    return 0.0 if g is None else g[3] - g[1]


def _caption_end(block: Block) -> int:
    """Lines of a block starting with a caption that belong to the caption: up to the first line ending
    with a full stop short of the block's right edge by more than two body heights (its last line)."""
    right = block.geometry[2] if block.geometry is not None else 1.0
    for k, line in enumerate(block.lines[:-1]):
        g, text = line.geometry, line.render()
        if g is not None and text.endswith(".") and right - g[2] > 2 * _height(line):
            return k + 1
    return len(block.lines)


def _split(block: Block, body: float) -> list[Block]:
    """Split a heading off the top of its block, a block at each line starting a list item, a caption's
    last line from the text under it, and each display formula line from the lines around it."""
    parts: list[list[Line]] = [[]]
    words = block.lines[0].words if block.lines else []
    caption_end = _caption_end(block) if _CAPTION.match(" ".join(w.value for w in words[:2])) else 0
    after_formula = False
    for k, line in enumerate(block.lines):
        first = line.words[0].value if line.words else ""
        tall_then_body = k == 1 and _height(block.lines[0]) >= 1.2 * body and _height(line) < 1.2 * body
        formula = is_formula([w.value for w in line.words])
        if parts[-1] and (tall_then_body or _LIST.match(first) or k == caption_end or formula or after_formula):
            parts.append([])
        parts[-1].append(line)
        after_formula = formula
    return [Block(p, kind=block.kind) for p in parts] if len(parts) > 1 else [block]


def _kind(block: Block, body: float) -> str:
    words = [w.value for ln in block.lines for w in ln.words]
    if not words or block.geometry is None:
        return block.kind
    _, y0, _, y1 = block.geometry
    n = len(block.lines)
    height = median([_height(ln) for ln in block.lines])
    text = " ".join(words)
    if n <= 2 and y1 <= MARGIN:
        return "page_header"
    if n <= 2 and y0 >= 1 - MARGIN:
        return "page_footer"
    if _CAPTION.match(text):
        return "caption"
    if _LIST.match(words[0]) and len(words) > 1:
        return "list_item"
    if n <= 2 and is_formula(words):
        return "formula"
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
    body = median(heights)
    out = []
    for block in blocks:
        if block.kind in ("table", "figure", "formula"):
            out.append(block)
            continue
        for part in _split(block, body):
            out.append(replace(part, kind=_kind(part, body)))
    return out
