"""Spans that word positions alone do not show: section rows, two-level headers and cells spanning rows.

Rows come from :mod:`vision.pipelines.ocr.table_structure` as lists of ``(first col, last col, phrases)``.

* **Section rows**: a body row holding a single cell in a table of three columns or more (``urban``,
  ``Resistance training``) is a heading across the table: the cell spans every column.
* **Two-level header**: when the first row fills fewer columns than the second, and the second reads as
  text (not numbers), both are header rows; each empty position of the first row joins the first-row cell
  nearest to it horizontally when no other cell lies between (``Male`` over ``% | 95% CI``), and a
  first-row cell with nothing under it spans both rows (``Variable``).
* **Centred labels**: a body row holding only a first-column cell, set midway in the space between two
  rows that have no first-column cell, closer than the usual row pitch, is a label spanning both rows.
* **Gaps in rules**: in a ruled table, a body cell grows into the empty positions below and above it
  while the rule between the rows is missing under its columns (a label over several rows of a grid).
  Without rules, a label at the top of its rows looks like a label over empty cells, and is left so.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

__all__ = ["Row", "centred_labels", "row_spans", "section_rows", "two_level_header"]

Row = list[tuple[int, int, list[int]]]
#: ``open(r, c0, c1)``: whether the rule between rows ``r`` and ``r + 1`` is missing under columns ``c0..c1``.
Opening = Callable[[int, int, int], bool]
#: ``crossed(y0, y1, c0, c1)``: whether a rule between ``y0`` and ``y1`` runs under columns ``c0..c1``.
Crossing = Callable[[float, float, int, int], bool]
_NUMBER = re.compile(r"[-+\u2212]?[\d.,]+")


def section_rows(rows: list[Row], header: int, n_cols: int) -> None:
    """Stretch the single cell of each body row across all columns (in place; see the module doc)."""
    if n_cols < 3:
        return
    for r in range(header, len(rows)):
        if len(rows[r]) == 1:
            rows[r] = [(0, n_cols - 1, rows[r][0][2])]


def two_level_header(
    rows: list[Row], header: int, texts: list[str], centres: np.ndarray, seps: np.ndarray, n_cols: int
) -> tuple[int, set[tuple[int, int]]]:
    """``(header rows, {(0, col) of first-row cells spanning two rows})``, widening first-row cells in
    place (see the module doc).

    Args:
        texts, centres: text and x-centre (pixels) of each phrase.
        seps: x of the column separators.
    """
    if header != 1 or len(rows) < 3:
        return header, set()
    first, second = rows[0], rows[1]
    filled0 = {c for c0, c1, _ in first for c in range(c0, c1 + 1)}
    filled1 = {c for c0, c1, _ in second for c in range(c0, c1 + 1)}
    words = [texts[i] for _, _, idx in second for i in idx]
    numeric = sum(bool(_NUMBER.fullmatch(t)) for t in words)
    if len(filled0) >= len(filled1) or not words or numeric > len(words) / 2:
        return header, set()
    edges = np.r_[centres.min() if len(centres) else 0.0, seps, centres.max() if len(centres) else 0.0]
    col_centre = (edges[:-1] + edges[1:]) / 2
    cell_centre = [float(np.mean(centres[idx])) for _, _, idx in first]
    for c in sorted(set(range(n_cols)) - filled0):
        k = int(np.argmin([abs(x - col_centre[c]) for x in cell_centre]))
        c0, c1, idx = first[k]
        lo, hi = min(c0, c), max(c1, c)
        if all(j == k or o1 < lo or o0 > hi for j, (o0, o1, _) in enumerate(first)):
            first[k] = (lo, hi, idx)
    tall = {(0, c0) for c0, c1, _ in first if c0 == c1 and c0 not in filled1}
    return 2, tall


def row_spans(
    rows: list[Row], header: int, n_cols: int, spans: dict[tuple[int, int], int], is_open: Opening
) -> None:
    """Stretch body cells down and up over empty positions that no rule separates from them (in place:
    ``spans`` maps ``(row, first col)`` to a row span; cells that move up change rows in ``rows``).

    A body cell grows into the empty position below it while ``is_open`` says the rule under it is
    missing across its columns (a top-aligned label over 2-3 rows), and likewise upwards (a label set in
    the middle row of three). Header rows and the header/body boundary are left alone.
    """
    taken = [[False] * n_cols for _ in rows]
    for r, row in enumerate(rows):
        for c0, c1, _ in row:
            _take(taken, r, r + spans.get((r, c0), 1) - 1, c0, c1)
    for r in range(header, len(rows)):
        for cell in list(rows[r]):
            c0, c1, _ = cell
            last = r + spans.get((r, c0), 1) - 1
            top, bottom = _reach(taken, r, last, c0, c1, header, is_open)
            if (top, bottom) == (r, last):
                continue
            _take(taken, top, bottom, c0, c1)
            spans.pop((r, c0), None)
            spans[(top, c0)] = bottom - top + 1
            if top != r:
                rows[r].remove(cell)
                rows[top] = sorted(rows[top] + [cell], key=lambda t: t[0])


def _take(taken: list[list[bool]], r0: int, r1: int, c0: int, c1: int) -> None:
    """Mark rows ``r0..r1`` of columns ``c0..c1`` covered (rows past the grid are ignored)."""
    for k in range(r0, min(r1 + 1, len(taken))):
        taken[k][c0 : c1 + 1] = [True] * (c1 - c0 + 1)


def _reach(
    taken: list[list[bool]], top: int, bottom: int, c0: int, c1: int, header: int, is_open: Opening
) -> tuple[int, int]:
    """First and last row a cell on rows ``top..bottom`` can cover: it grows while the next row's
    positions under its columns are free and the rule between is open."""

    def free(r: int) -> bool:
        return not any(taken[r][c0 : c1 + 1])

    while top - 1 >= header and is_open(top - 1, c0, c1) and free(top - 1):
        top -= 1
    while bottom + 1 < len(taken) and is_open(bottom, c0, c1) and free(bottom + 1):
        bottom += 1
    return top, bottom


def centred_labels(
    rows: list[Row],
    header: int,
    extent: tuple[list[float], list[float]],
    h: float,
    spans: dict[tuple[int, int], int],
    crossed: Crossing,
) -> None:
    """Join each first-column label centred between two rows to the row above, spanning both (in place:
    the label's row leaves ``rows`` and the ``(top, bottom)`` lists of ``extent``; ``spans`` gets the cell).

    A body row holding only a first-column cell is such a label when the rows above and below have no
    first-column cell, the label's middle lies within ``0.3 h`` of the middle of the space between them,
    that space is narrower than the usual row pitch (a section row between two rows leaves a whole
    pitch and more), and no rule crosses the first column there.
    """
    top, bottom = extent
    pitch = _pitch(rows, top, header)
    m = header + 1
    while m < len(rows) - 1:
        if pitch is not None and _is_centred_label(rows, m, top, bottom, h, pitch, crossed):
            rows[m - 1].insert(0, rows[m][0])
            spans[(m - 1, 0)] = 2
            del rows[m], top[m], bottom[m]
        m += 1


def _pitch(rows: list[Row], top: list[float], header: int) -> float | None:
    """Median distance between the tops of consecutive body rows of two cells or more (None: too few)."""
    tops = [top[r] for r in range(header, len(rows)) if len(rows[r]) > 1]
    return float(np.median(np.diff(tops))) if len(tops) >= 3 else None


def _is_centred_label(
    rows: list[Row], m: int, top: list[float], bottom: list[float], h: float, pitch: float, crossed: Crossing
) -> bool:
    """Whether row ``m`` is a first-column label centred across rows ``m - 1`` and ``m + 1``."""
    if len(rows[m]) != 1 or rows[m][0][:2] != (0, 0):
        return False
    if any(c0 == 0 for c0, _, _ in rows[m - 1] + rows[m + 1]):
        return False
    above, below = bottom[m - 1], top[m + 1]
    centred = abs((top[m] + bottom[m]) / 2 - (above + below) / 2) <= 0.3 * h
    return centred and below - above < pitch and not crossed(above, below, 0, 0)
