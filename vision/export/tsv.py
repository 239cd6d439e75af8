"""Tesseract's TSV output: one row per page, block, paragraph, line and word, with pixel boxes.

Columns (Tesseract 4/5 ``tesseract IMAGE OUT tsv``): ``level page_num block_num par_num line_num word_num
left top width height conf text``. Levels are 1 page, 2 block, 3 paragraph, 4 line, 5 word; numbers count
from 1 within their parent; boxes are integer pixels of the page image the geometry refers to; ``conf`` is
the word's confidence times 100, and -1 on the other rows. A block is one paragraph (our structure has no
separate paragraph level). Tabs and newlines inside a word become spaces.
"""

from __future__ import annotations

from vision.structures.document import Document, Page
from vision.structures.geometry import BBox

__all__ = ["HEADER", "to_tsv"]

HEADER = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"


def _pixels(box: BBox | None, page: Page) -> str:
    height, width = page.dimensions
    x0, y0, x1, y1 = box if box is not None else (0.0, 0.0, 1.0, 1.0)
    left, top = round(x0 * width), round(y0 * height)
    return f"{left}\t{top}\t{round(x1 * width) - left}\t{round(y1 * height) - top}"


def _page_rows(page: Page, number: int) -> list[str]:
    rows = [f"1\t{number}\t0\t0\t0\t0\t{_pixels(None, page)}\t-1\t"]
    for b, block in enumerate((bl for bl in page.blocks if any(ln.words for ln in bl.lines)), start=1):
        rows.append(f"2\t{number}\t{b}\t0\t0\t0\t{_pixels(block.geometry, page)}\t-1\t")
        rows.append(f"3\t{number}\t{b}\t1\t0\t0\t{_pixels(block.geometry, page)}\t-1\t")
        for n, line in enumerate((ln for ln in block.lines if ln.words), start=1):
            rows.append(f"4\t{number}\t{b}\t1\t{n}\t0\t{_pixels(line.geometry, page)}\t-1\t")
            for w, word in enumerate(line.words, start=1):
                text = " ".join(word.value.split())
                conf = f"{100 * word.confidence:.6f}".rstrip("0").rstrip(".")
                rows.append(f"5\t{number}\t{b}\t1\t{n}\t{w}\t{_pixels(word.geometry, page)}\t{conf}\t{text}")
    return rows


def to_tsv(doc: Document) -> str:
    """The document as Tesseract TSV (header line first, pages numbered from 1 in document order)."""
    rows = [HEADER]
    for number, page in enumerate(doc.pages, start=1):
        rows.extend(_page_rows(page, number))
    return "\n".join(rows) + "\n"
