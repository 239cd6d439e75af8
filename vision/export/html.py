"""HTML5 export: headings, paragraphs, lists, captions, footnotes, tables (with spans), figures
(``<figure id="figure-P-K" data-bbox="x0 y0 x1 y1">``, relative box, holding the caption that follows it
as ``<figcaption>``) and display formulas (``<pre class="formula">``), page headers and footers left out;
one ``<section class="page">`` per page. Same content as :mod:`vision.export.markdown`."""

from __future__ import annotations

import re
from html import escape

from vision.structures.document import Block, Document, Page
from vision.structures.table import Table

__all__ = ["DROPPED_KINDS", "export_html", "figure_anchor", "page_html", "table_to_html"]

#: Block kinds that exports of the reading text leave out (running heads, folios).
DROPPED_KINDS = frozenset({"page_header", "page_footer"})

#: A list item's own bullet or enumerator (``•``, ``-``, ``3.``, ``(a)``), which list markup replaces.
BULLET = re.compile(r"^([-*+\u2022\u00b7\u25aa\u25cf\u2013\u2014]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s+")

_TAGS = {"title": "h1", "heading": "h2", "caption": "figcaption"}
_CLASSES = {"footnote": "footnote"}


def figure_anchor(page: Page, number: int) -> str:
    """The id of the ``number``-th figure (from 1) of ``page``: ``figure-P-K``, P the page index from 1."""
    return f"figure-{page.page_idx + 1}-{number}"


def block_text(block: Block) -> str:
    """A block's lines joined by single spaces (one paragraph of running text)."""
    return " ".join(line.render() for line in block.lines).strip()


def table_to_html(table: Table) -> str:
    """``<table>`` with ``<thead>`` for the header rows and ``<tbody>`` for the rest, ``colspan``/``rowspan``
    where cells span."""

    def row(cells: list) -> str:
        out = []
        for c in cells:
            span = (f' colspan="{c.col_span}"' if c.col_span > 1 else "") + (
                f' rowspan="{c.row_span}"' if c.row_span > 1 else ""
            )
            out.append(f"<td{span}>{escape(c.text)}</td>")
        return "<tr>" + "".join(out) + "</tr>"

    rows = table.rows()
    head = "".join(row(r) for r in rows[: table.header_rows])
    body = "".join(row(r) for r in rows[table.header_rows :])
    return (
        "<table>" + (f"<thead>{head}</thead>" if head else "") + (f"<tbody>{body}</tbody>" if body else "") + "</table>"
    )


def page_html(page: Page) -> list[str]:
    """The HTML elements of one page's blocks, in reading order."""
    out: list[str] = []
    tables = iter(page.tables)
    in_list = False
    figures = 0
    held: Block | None = None  # a caption already written inside the figure above it
    for k, block in enumerate(page.blocks):
        if block.kind in DROPPED_KINDS or block is held:
            continue
        if block.kind == "list_item" and not in_list:
            out.append("<ul>")
        elif block.kind != "list_item" and in_list:
            out.append("</ul>")
        in_list = block.kind == "list_item"
        if block.kind == "table":
            table = next(tables, None)
            out.append(table_to_html(table) if table is not None else f"<p>{escape(block_text(block))}</p>")
            continue
        text = escape(block_text(block))
        if block.kind == "figure":
            figures += 1
            box = " ".join(f"{v:.4f}" for v in block.geometry) if block.geometry is not None else ""
            after = page.blocks[k + 1] if k + 1 < len(page.blocks) else None
            caption = ""
            if after is not None and after.kind == "caption":
                held, caption = after, f"<figcaption>{escape(block_text(after))}</figcaption>"
            inner = f"<p>{text}</p>" if text else ""
            out.append(f'<figure id="{figure_anchor(page, figures)}" data-bbox="{box}">{inner}{caption}</figure>')
        elif block.kind == "formula":
            out.append(f'<pre class="formula">{text}</pre>')
        elif block.kind == "list_item":
            out.append(f"<li>{escape(BULLET.sub('', block_text(block)))}</li>")
        elif block.kind in _TAGS:
            out.append(f"<{_TAGS[block.kind]}>{text}</{_TAGS[block.kind]}>")
        elif text:
            cls = f' class="{_CLASSES[block.kind]}"' if block.kind in _CLASSES else ""
            out.append(f"<p{cls}>{text}</p>")
    if in_list:
        out.append("</ul>")
    return out


def export_html(doc: Document) -> str:
    """A complete HTML5 document of ``doc`` (UTF-8)."""
    title = escape(doc.source or "document")
    pages = [
        f'<section class="page" data-page="{p.page_idx}">\n' + "\n".join(page_html(p)) + "\n</section>"
        for p in doc.pages
    ]
    return (
        f'<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n</head>\n<body>\n'
        + "\n".join(pages)
        + "\n</body>\n</html>\n"
    )
