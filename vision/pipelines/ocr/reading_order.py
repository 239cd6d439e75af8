"""Layout: words -> lines -> blocks, blocks in reading order, and large non-text regions.

All decisions are made on pixel boxes of an upright page (the pipeline deskews and rotates first), and are
returned as index groups so that the caller can attach any geometry to the result. Pairwise decisions are
vectorised (numpy cost matrices, computed in row chunks), so a dense page costs milliseconds.

Rules (thresholds in units of text height, so they hold at any resolution):

* **Lines**: a word continues the word on its left that it overlaps vertically by at least ``line_overlap``
  of the smaller height, starting at most ``word_gap`` heights after it (mutual nearest neighbours).
  Linking neighbours (not comparing with a line's first word) lets a line drift with residual skew; the
  gap limit splits rows that cross a column gutter or a form's label/value space.
* **Blocks**: a line continues the nearest line above it when the vertical gap is at most ``block_gap``
  heights, their horizontal extents overlap and their heights differ by at most ``height_ratio`` (titles
  stay apart); again mutual nearest neighbours, so a block is a simple top-to-bottom chain.
* **Cells** (:mod:`vision.pipelines.ocr.cells`): short lines (under three words) with another line close
  beside them on the same row are table or form cells, and so are short lines ending in a money amount with
  a line anywhere on their row (a receipt's prices); cells and the lines beside them are never chained.
* **Reading order**: recursive XY-cut over the blocks: horizontal bands top to bottom, then columns left to
  right. Bands that are running-text columns with the same gutter are merged first, so columns are read
  whole; rows of single-line blocks (tables, forms) stay rows and are joined into one line each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from vision.ops.median import median
from vision.pipelines.ocr._intervals import gaps, group_boxes, row_order, widest_gap
from vision.pipelines.ocr.equation_numbers import attach_numbers
from vision.pipelines.ocr.cells import CELL_WORDS, is_amount, tabular_lines
from vision.pipelines.ocr.gutters import barrier_right, gutter_barrier, gutter_lines
from vision.pipelines.ocr.regions import REGION_MAX_WORDS, find_regions
from vision.structures import Block, Line, Word

__all__ = [
    "LayoutOptions",
    "CELL_WORDS",
    "group_lines",
    "tabular_lines",
    "group_blocks",
    "order_blocks",
    "build_blocks",
    "find_regions",
]


@dataclass(frozen=True)
class LayoutOptions:
    """Thresholds of the layout rules (see the module docstring); heights are text heights.

    Attributes:
        line_overlap: least vertical overlap (fraction of the smaller height) of consecutive words in a line.
        word_gap: largest horizontal gap between consecutive words of a line, in heights.
        block_gap: largest vertical gap between consecutive lines of a block, in heights.
        height_ratio: largest ratio of line heights within a block.
        cell_gap: largest gap, in heights, between a table or form cell and its row neighbour.
        regions: find large non-text areas (figures, photos, logos) as ``Region(kind="figure")``; they
            also keep the column gutters beside them (``build_blocks(obstacles=...)``).
        region_min_area: smallest such area, as a fraction of the page.
        gutter_width: least width, in heights, of a column gutter that no line crosses
            (:mod:`vision.pipelines.ocr.gutters`); 0 turns gutter detection off.
        amount_gap: largest gap, in heights, between a short line ending in a money amount (a receipt's
            price) and the line it shares a row with (:func:`~vision.pipelines.ocr.cells.tabular_lines`).
        level_lines: group the straight boxes of a tilted or photographed page levelled by its level map
            (:mod:`vision.pipelines.ocr.skew`), so that rows stay rows.
    """

    line_overlap: float = 0.5
    word_gap: float = 2.5
    block_gap: float = 1.0
    height_ratio: float = 1.6
    cell_gap: float = 10.0
    regions: bool = True
    region_min_area: float = 0.01
    gutter_width: float = 1.0
    amount_gap: float = 40.0
    level_lines: bool = True


_CHUNK = 1024  # rows of a pairwise cost matrix computed at once: bounds memory on pages with many words


def _mutual_best(cost_rows: Callable[[slice], np.ndarray], n: int) -> np.ndarray:
    """Link ``i -> j`` where ``j`` is ``i``'s cheapest successor and ``i`` is ``j``'s cheapest predecessor.

    Args:
        cost_rows: ``rows -> float[len(rows), n]`` pairwise costs, ``inf`` where ``j`` cannot follow ``i``.
        n: number of items.

    Returns:
        ``int[n]``: the successor of each item, or -1.
    """
    succ = np.full(n, -1)
    col_best = np.full(n, np.inf)
    col_arg = np.full(n, -1)
    for start in range(0, n, _CHUNK):
        rows = slice(start, min(start + _CHUNK, n))
        cost = cost_rows(rows)
        best = cost.argmin(axis=1)
        ok = np.isfinite(cost[np.arange(cost.shape[0]), best])
        succ[rows] = np.where(ok, best, -1)
        arg = cost.argmin(axis=0)
        val = cost[arg, np.arange(n)]
        better = val < col_best
        col_best[better], col_arg[better] = val[better], arg[better] + start
    linked = succ >= 0
    linked[linked] = col_arg[succ[linked]] == np.nonzero(linked)[0]
    return np.where(linked, succ, -1)


def _chains(succ: np.ndarray) -> list[list[int]]:
    """Follow successor links (acyclic) from every item that has no predecessor."""
    has_pred = np.zeros(len(succ), dtype=bool)
    has_pred[succ[succ >= 0]] = True
    chains = []
    for start in np.nonzero(~has_pred)[0]:
        chain, k = [int(start)], int(succ[start])
        while k >= 0:
            chain.append(k)
            k = int(succ[k])
        chains.append(chain)
    return chains


def _barrier(boxes: np.ndarray, options: LayoutOptions) -> tuple[np.ndarray, float]:
    """The column-gutter barrier of pixel word boxes (empty when gutters are off)."""
    if options.gutter_width <= 0:
        return np.zeros((0, 0), dtype=bool), 1.0
    return gutter_barrier(boxes, min_width=options.gutter_width)


def group_lines(
    boxes: np.ndarray,
    options: LayoutOptions = LayoutOptions(),
    barrier: tuple[np.ndarray, float] | None = None,
) -> list[list[int]]:
    """Group word boxes into lines.

    Each word is linked to the word that best continues it on the right (vertical overlap at least
    ``line_overlap`` of the smaller height, gap at most ``word_gap`` heights; cost: gap in heights plus
    missing overlap), when that word's best predecessor is it in turn; lines are the chains of links.
    Linking neighbours rather than comparing with a line's first word lets a line follow residual skew.

    Args:
        boxes: ``[N, 4]`` pixel ``x0, y0, x1, y1`` of words on an upright page.
        barrier: column gutters no line crosses (:func:`~vision.pipelines.ocr.gutters.gutter_barrier`;
            ``None``: found here).

    Returns:
        Lines as lists of word indices, each left to right; lines ordered by their top edge.
    """
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    h = np.maximum(b[:, 3] - b[:, 1], 1e-6)
    stop = barrier_right(b, *(barrier if barrier is not None else _barrier(b, options)))

    def cost_rows(rows: slice) -> np.ndarray:
        bi, hi = b[rows, None, :], h[rows, None]
        hmin = np.minimum(hi, h[None, :])
        overlap = (np.minimum(bi[..., 3], b[None, :, 3]) - np.maximum(bi[..., 1], b[None, :, 1])) / hmin
        gap = b[None, :, 0] - bi[..., 2]
        valid = (
            (overlap >= options.line_overlap)
            & (gap >= -0.5 * hmin)
            & (gap <= options.word_gap * hmin)
            & (b[None, :, 0] > bi[..., 0])
            & (b[None, :, 0] < stop[rows, None])  # never across a column gutter
        )
        return np.where(valid, np.maximum(gap, 0.0) / hmin + (1.0 - overlap), np.inf)

    lines = _chains(_mutual_best(cost_rows, len(b)))
    return sorted(lines, key=lambda ln: (b[ln, 1].min(), b[ln, 0].min()))


def group_blocks(
    line_boxes: np.ndarray, options: LayoutOptions = LayoutOptions(), cells: np.ndarray | None = None
) -> list[list[int]]:
    """Chain lines into blocks (paragraphs, column pieces, address groups).

    A line is linked to the line below it with the smallest gap (at most ``block_gap`` heights, overlapping
    horizontally, heights within ``height_ratio``), when that line's nearest such line above is it.

    Args:
        line_boxes: ``[L, 4]`` pixel boxes of lines, ordered by their top edge.
        cells: ``bool[L]`` lines never chained (see :func:`tabular_lines`).

    Returns:
        Blocks as lists of line indices, top to bottom, ordered by their first line.
    """
    b = np.asarray(line_boxes, dtype=np.float64).reshape(-1, 4)
    h = np.maximum(b[:, 3] - b[:, 1], 1e-6)
    free = np.ones(len(b), dtype=bool) if cells is None else ~np.asarray(cells, dtype=bool)

    def cost_rows(rows: slice) -> np.ndarray:
        bi, hi = b[rows, None, :], h[rows, None]
        hmin, hmax = np.minimum(hi, h[None, :]), np.maximum(hi, h[None, :])
        gap = b[None, :, 1] - bi[..., 3]
        x_overlap = np.minimum(bi[..., 2], b[None, :, 2]) - np.maximum(bi[..., 0], b[None, :, 0])
        valid = (
            (b[None, :, 1] > bi[..., 1])
            & (gap >= -0.5 * hmin)
            & (gap <= options.block_gap * hmin)
            & (x_overlap > 0)
            & (hmax <= options.height_ratio * hmin)
            & free[rows, None]
            & free[None, :]
        )
        return np.where(valid, gap / hmin, np.inf)

    return sorted(_chains(_mutual_best(cost_rows, len(b))), key=lambda bl: bl[0])


def order_blocks(
    block_boxes: np.ndarray, lines_per_block: np.ndarray, columns: np.ndarray | None = None
) -> list[int]:
    """Reading order of blocks by recursive XY-cut (see the module docstring for the column rule).

    At each level the blocks are cut into horizontal bands at every vertical whitespace gap; consecutive
    bands that are both running-text columns (a vertical gutter, blocks of two lines or more on average on
    each side) with overlapping gutters are merged back, so paragraph breaks that happen to line up across
    columns do not interleave the columns. A single band is cut at its widest vertical gutter. Where the
    words' column gutters are given, a band's gutter is one of them that runs along at least half of the
    band's height with no block across it and mostly running text on each side (else the rule on lines per
    block above).

    Args:
        block_boxes: ``[B, 4]`` pixel boxes of blocks.
        lines_per_block: ``[B]`` number of lines in each block.
        columns: ``[G, 3]`` pixel ``(x, y0, y1)`` of column gutters
            (:func:`~vision.pipelines.ocr.gutters.gutter_lines`).

    Returns:
        Block indices in reading order.
    """
    boxes = np.asarray(block_boxes, dtype=np.float64).reshape(-1, 4)
    nlines = np.asarray(lines_per_block, dtype=np.float64).reshape(-1)

    line_height = median((boxes[:, 3] - boxes[:, 1]) / np.maximum(nlines, 1)) if len(boxes) else 0.0
    cols = np.zeros((0, 3)) if columns is None else np.asarray(columns, dtype=np.float64).reshape(-1, 3)

    def running_text(side: np.ndarray) -> bool:
        """Blocks of two lines or more cover most of ``side``'s area (text columns, not form fields)."""
        area = (boxes[side, 2] - boxes[side, 0]) * (boxes[side, 3] - boxes[side, 1])
        return len(side) > 0 and area[nlines[side] >= 2].sum() >= 0.5 * area.sum()

    def word_gutter(idx: np.ndarray) -> tuple[float, float] | None:
        y0, y1 = boxes[idx, 1].min(), boxes[idx, 3].max()
        for x, g0, g1 in cols:
            across = ((boxes[idx, 0] < x) & (boxes[idx, 2] > x)).any()
            sides = running_text(idx[boxes[idx, 2] <= x]) and running_text(idx[boxes[idx, 0] >= x])
            if not across and sides and min(y1, g1) - max(y0, g0) >= 0.5 * (y1 - y0):
                return (x - line_height, x + line_height)
        return None

    def gutter(idx: np.ndarray) -> tuple[float, float] | None:
        found = word_gutter(idx)
        if found is not None:
            return found
        gap = widest_gap(boxes[idx, 0], boxes[idx, 2])
        if gap is None:
            return None
        cut = (gap[0] + gap[1]) / 2
        left, right = nlines[idx[boxes[idx, 2] <= cut]], nlines[idx[boxes[idx, 0] >= cut]]
        return gap if left.mean() >= 2 and right.mean() >= 2 else None

    def one_side(band: np.ndarray, gap: tuple[float, float], above: float) -> bool:
        """Running text wholly on one side of a gutter: a column that goes on below a shorter one."""
        cut = (gap[0] + gap[1]) / 2
        left, right = boxes[band, 2] <= cut, boxes[band, 0] >= cut
        close = boxes[band, 1].min() - above <= 2 * line_height  # a heading right under the column
        return bool((left.all() or right.all()) and (nlines[band].mean() >= 2 or close))

    def bands(idx: np.ndarray) -> list[np.ndarray]:
        cuts = [(a + b) / 2 for a, b in gaps(boxes[idx, 1], boxes[idx, 3])]
        if not cuts:
            return [idx]
        centre = (boxes[idx, 1] + boxes[idx, 3]) / 2
        order = np.argsort(centre, kind="stable")
        found = np.split(idx[order], np.searchsorted(centre[order], cuts))
        merged, last = [found[0]], gutter(found[0])
        for band in found[1:]:
            above = boxes[merged[-1], 3].max()
            g = gutter(band)
            if last is not None and g is not None and min(last[1], g[1]) > max(last[0], g[0]):
                merged[-1] = np.concatenate([merged[-1], band])
                last = gutter(merged[-1])
            elif last is not None and g is None and one_side(band, last, above):
                merged[-1] = np.concatenate([merged[-1], band])
                last = gutter(merged[-1])
            else:
                merged.append(band)
                last = g
        return merged

    def visit(idx: np.ndarray) -> list[int]:
        if len(idx) <= 1:
            return [int(i) for i in idx]
        parts = bands(idx)
        if len(parts) > 1:
            return [i for part in parts for i in visit(part)]
        if (nlines[idx] == 1).all():  # table or form cells whose rows touch: read row by row
            return row_order(boxes, idx)
        gap = word_gutter(idx) or widest_gap(boxes[idx, 0], boxes[idx, 2])
        if gap is not None:
            cut = (gap[0] + gap[1]) / 2
            return visit(idx[boxes[idx, 2] <= cut]) + visit(idx[boxes[idx, 0] >= cut])
        sub = boxes[idx]
        return [int(i) for i in idx[np.lexsort((sub[:, 0], sub[:, 1]))]]

    return visit(np.arange(len(boxes)))


def _merge_rows(
    blocks: list[list[list[int]]], boxes: np.ndarray, options: LayoutOptions
) -> list[list[list[int]]]:
    """Join consecutive single-line blocks that sit on one row into one line (a table or form row).

    Args:
        blocks: blocks in reading order, each a list of lines, each a list of word indices.
        boxes: ``[N, 4]`` pixel word boxes.
    """
    merged: list[list[list[int]]] = []
    for block in blocks:
        if merged and len(block) == 1 and len(merged[-1]) == 1:
            prev, cur = boxes[merged[-1][0]], boxes[block[0]]
            top, bottom = max(prev[:, 1].min(), cur[:, 1].min()), min(prev[:, 3].max(), cur[:, 3].max())
            h = min(prev[:, 3].max() - prev[:, 1].min(), cur[:, 3].max() - cur[:, 1].min())
            if bottom - top >= options.line_overlap * h and cur[:, 0].min() >= prev[:, 2].max():
                merged[-1] = [merged[-1][0] + block[0]]
                continue
        merged.append(block)
    return merged


def build_blocks(
    words: list[Word], layout_boxes: np.ndarray, options: LayoutOptions = LayoutOptions(),
    obstacles: np.ndarray | None = None,
) -> list[Block]:
    """Arrange words into blocks of lines in reading order.

    Lines, cells, blocks and their XY-cut order come from the functions above; finally consecutive
    single-line blocks on one row (table and form rows) are joined into one line, so a row reads as one.

    Args:
        words: recognised words; their own geometry is kept as is (it may refer to the unrotated page).
        layout_boxes: ``[N, 4]`` pixel boxes of the same words on the upright page, used for the decisions.
        obstacles: ``[M, 4]`` pixel boxes of figures on that page: they take a column's place beside a
            gutter (a column holding a figure keeps its gutter), and are not read.

    Returns:
        Blocks in reading order; line and block geometry is the union of their words' geometry.
    """
    if not words:
        return []
    boxes = np.asarray(layout_boxes, dtype=np.float64).reshape(-1, 4)
    solid = boxes if obstacles is None or not len(obstacles) else np.vstack([boxes, np.reshape(obstacles, (-1, 4))])
    barrier = _barrier(solid, options)
    lines = group_lines(boxes, options, barrier)
    lines = attach_numbers(lines, [w.value for w in words], boxes, barrier_right(boxes, *barrier))
    line_boxes = group_boxes(boxes, lines)
    amounts = np.array([is_amount([words[i].value for i in ln]) for ln in lines], dtype=bool)
    cells = tabular_lines(line_boxes, np.array([len(ln) for ln in lines]), options, barrier, amounts)
    blocks = group_blocks(line_boxes, options, cells)
    columns = gutter_lines(*barrier, min_height=4 * median(boxes[:, 3] - boxes[:, 1]))
    order = order_blocks(group_boxes(line_boxes, blocks), np.array([len(bl) for bl in blocks]), columns)
    ordered = _merge_rows([[lines[k] for k in blocks[j]] for j in order], boxes, options)
    return [Block([Line([words[i] for i in line]) for line in block]) for block in ordered]
