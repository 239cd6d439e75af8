"""Markdown export (CommonMark + GFM pipe tables): titles and headings as ``#``/``##``, paragraphs, list
items, captions in italics, tables as pipe tables, or as HTML tables where a cell spans (pipe tables cannot
span), figures as image placeholders ``![caption](#figure-P-K)`` (the alt text is the figure's caption when
one follows it; the link is the anchor of the figure in the HTML export), display formulas as fenced code
(the OCR text of a formula is not TeX); page headers and footers are left out, pages are separated by a
thematic break (``---``)."""

from __future__ import annotations

import re

from vision.export.html import BULLET, DROPPED_KINDS, block_text, figure_anchor, table_to_html
from vision.structures.document import Document, Page
from vision.structures.table import Table

__all__ = ["export_markdown", "page_markdown", "table_markdown"]

_SPECIAL = re.compile(r"([\\`*_\[\]<>#|])")


def _escape(text: str) -> str:
    """Backslash-escape characters that Markdown would read as markup (OCR text is literal)."""
    return _SPECIAL.sub(r"\\\1", text)


def table_markdown(table: Table) -> str:
    """A GFM pipe table (its first row is the header row), or an HTML table when a cell spans."""
    if table.has_spans() or table.n_rows == 0 or table.n_cols == 0:
        return table_to_html(table)
    rows = [[_escape(c.text) for c in row] for row in table.rows()]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * table.n_cols]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def _list_item(text: str) -> str:
    """``- text``, or the item's own number (``3. text``) when it has one; a bullet glyph is replaced."""
    match = BULLET.match(text)
    if match and match.group(1)[-1] in ".)" and match.group(1)[0].isdigit():
        return f"{match.group(1)[:-1]}. {_escape(text[match.end():])}"
    return "- " + _escape(text[match.end():] if match else text)


def page_markdown(page: Page) -> str:
    """The Markdown of one page's blocks in reading order (blocks separated by blank lines)."""
    parts: list[str] = []
    tables = iter(page.tables)
    last = ""
    figures = 0
    for k, block in enumerate(page.blocks):
        if block.kind in DROPPED_KINDS:
            continue
        previous, last = last, block.kind
        if block.kind == "figure" and not block_text(block):
            figures += 1
            after = page.blocks[k + 1] if k + 1 < len(page.blocks) else None
            alt = block_text(after) if after is not None and after.kind == "caption" else "Figure"
            parts.append(f"![{_escape(alt)}](#{figure_anchor(page, figures)})")
            continue
        if block.kind == "table":
            table = next(tables, None)
            if table is not None:
                parts.append(table_markdown(table))
                continue
        text = block_text(block)
        if not text:
            continue
        if block.kind == "title":
            parts.append("# " + _escape(text))
        elif block.kind == "heading":
            parts.append("## " + _escape(text))
        elif block.kind == "list_item":
            item = _list_item(text)
            if parts and previous == "list_item":
                parts[-1] += "\n" + item  # consecutive items: one list
            else:
                parts.append(item)
        elif block.kind == "caption":
            parts.append("*" + _escape(text) + "*")
        elif block.kind == "formula":
            parts.append("```\n" + text + "\n```")
        else:
            parts.append(_escape(text))
    return "\n\n".join(parts)


def export_markdown(doc: Document) -> str:
    """Every page's Markdown, pages separated by ``---`` lines; ends with a newline."""
    return "\n\n---\n\n".join(page_markdown(p) for p in doc.pages) + "\n"
