"""Table and form cells among a page's lines: the lines that read row by row instead of joining paragraphs.

Part of the layout (:mod:`vision.pipelines.ocr.reading_order`): lines are grouped first, then the lines found
here are kept out of the paragraph chains, so a table's, a form's or a receipt's rows read across.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Sequence

import numpy as np

from vision.pipelines.ocr.gutters import barrier_right

if TYPE_CHECKING:
    from vision.pipelines.ocr.reading_order import LayoutOptions

__all__ = ["CELL_WORDS", "is_amount", "tabular_lines"]

CELL_WORDS = 3  # lines of fewer words beside another line are table/form cells (codes, amounts, labels)
_AMOUNT = re.compile(r"^[-+(]?(?:[$€£¥]|[A-Z]{2,3})?-?\d{1,3}(?:[,. ']?\d{3})*[.,]\d{2}(?:[$€£¥%)]|[A-Z]{2,3})?$")
_TAX_CODE = re.compile(r"^(?:[A-Z*]|\*[A-Z])$")


def is_amount(words: Sequence[str]) -> bool:
    """Whether a line ends in a money amount (``12.50``, ``$1,234.00``, ``-3,99€``, ``RM9.80`` aside), possibly
    followed by a one-letter tax code (``12.00 A``): how receipts and invoices set their prices."""
    if not words:
        return False
    last = words[-1]
    if _TAX_CODE.match(last) and len(words) > 1:
        last = words[-2]
    return bool(_AMOUNT.match(last))


def tabular_lines(
    line_boxes: np.ndarray,
    line_words: np.ndarray,
    options: LayoutOptions | None = None,
    barrier: tuple[np.ndarray, float] | None = None,
    amounts: np.ndarray | None = None,
) -> np.ndarray:
    """``bool[L]``: lines that belong to table or form rows, which are never chained into blocks.

    A *cell* is a short line (fewer than :data:`CELL_WORDS` words) with another line beside it on the same
    row (vertical overlap of at least ``line_overlap`` of the smaller height) at most ``cell_gap`` heights
    away, or at most ``amount_gap`` heights away when the short line ends in a money amount (``amounts``,
    :func:`is_amount`): a receipt's price far right of its item. Cells, and lines with a cell beside them,
    are tabular: tables, forms and receipts then read row by row, while column text (long lines beside
    long lines) still forms paragraphs. Across a column gutter (``barrier``), two lines of running text are
    never neighbours: a long line, or a short one with a long line just above or below it, left-aligned with
    it (a paragraph's last line, a short heading).
    """
    if options is None:
        from vision.pipelines.ocr.reading_order import LayoutOptions

        options = LayoutOptions()
    b = np.asarray(line_boxes, dtype=np.float64).reshape(-1, 4)
    h = np.maximum(b[:, 3] - b[:, 1], 1e-6)
    hmin = np.minimum(h[:, None], h[None, :])
    overlap = np.minimum(b[:, None, 3], b[None, :, 3]) - np.maximum(b[:, None, 1], b[None, :, 1])
    gap = np.maximum(b[None, :, 0] - b[:, None, 2], b[:, None, 0] - b[None, :, 2])  # > 0 when apart
    short = np.asarray(line_words).reshape(-1) < CELL_WORDS
    reach = np.full(len(b), options.cell_gap)
    if amounts is not None:
        amount = short & np.asarray(amounts, dtype=bool).reshape(-1)
        reach[amount] = max(options.amount_gap, options.cell_gap)
    reach = np.maximum(reach[:, None], reach[None, :])  # either line of a pair may be the amount
    near = (overlap >= options.line_overlap * hmin) & (gap >= 0) & (gap <= reach * hmin)
    if barrier is not None:
        stop = barrier_right(b, *barrier)
        across = b[None, :, 0] >= stop[:, None]  # j starts past the gutter right of i
        across |= across.T
        text = ~short
        dy = np.maximum(b[None, :, 1] - b[:, None, 3], b[:, None, 1] - b[None, :, 3])  # vertical gap
        aligned = np.abs(b[:, None, 0] - b[None, :, 0]) <= 0.5 * hmin
        text |= short & ((dy >= 0) & (dy <= 2 * options.block_gap * hmin) & aligned & ~short[None, :]).any(1)
        near &= ~across | ~(text[:, None] & text[None, :])
    cells = short & near.any(axis=1)
    return cells | (near & cells[None, :]).any(axis=1)
