"""Column gutters: vertical strips of whitespace with text on both sides, found on word boxes.

A gap between two words of one row is an ordinary space or a gutter depending on what is above and below
it: a gutter stays empty over several text lines, with text left and right of it on each of them. On a
grid of cells a quarter of the median text height wide, a cell is a *gutter cell* when it is empty and the
empty run of its grid row, from the text on its left to the text on its right, is at least ``min_width``
heights wide; each vertical run of empty cells that holds gutter cells over ``min_lines`` text lines or
more is a barrier (its cells on rows where the strip is at least half that wide, or with text on one side
only), and words are never joined into one line across a barrier. A spanning title or table
row crossing the strip interrupts the run, so it stays whole.

Measured on rendered two- and three-column pages (``benchmarks/reading_order.py``): the widest inter-word
space of justified 10 pt text is under 1 height, and a 5 mm gutter at 10 pt is about 1.5 heights. Narrow
justified columns without hyphenation (a browser's) open *rivers*, spaces of more than a height lined up
over a few lines; a gutter must run along ``min_lines`` = 6 text lines, which rivers seldom do (3 lines cut
justified lines at rivers: page CER on 40 held-out Chromium-drawn 2- and 3-column pages 0.133 / 0.093
at 3 lines, 0.004 / 0.055 at 6).
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.ops.median import median

__all__ = ["barrier_right", "gutter_barrier", "gutter_lines"]

_CELLS_PER_HEIGHT = 4  # grid resolution: a quarter of the median word height


def gutter_barrier(
    boxes: np.ndarray, *, min_width: float = 1.0, min_lines: float = 6.0
) -> tuple[np.ndarray, float]:
    """``(barrier bool[Gy, Gx], cell size in pixels)`` for pixel word boxes ``[N, 4]`` (see the module doc).

    Args:
        min_width: least gutter width, in median word heights.
        min_lines: least height of the text beside a gutter, in text lines (median heights x 1.2).
    """
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if len(b) < 2:
        return np.zeros((0, 0), dtype=bool), 1.0
    height = median(b[:, 3] - b[:, 1])
    cell = max(height / _CELLS_PER_HEIGHT, 1.0)
    g = np.floor(b / cell).astype(np.int64)
    gx, gy = int(g[:, 2].max()) + 2, int(g[:, 3].max()) + 2
    if gx * gy > 20_000_000:  # a page with one tiny word among huge ones: no reliable grid
        return np.zeros((0, 0), dtype=bool), cell
    # occupancy through a 2-D difference array: +1/-1 at the corners, then two cumulative sums
    diff = np.zeros((gy + 1, gx + 1), dtype=np.int32)
    np.add.at(diff, (g[:, 1], g[:, 0]), 1)
    np.add.at(diff, (g[:, 1], g[:, 2] + 1), -1)
    np.add.at(diff, (g[:, 3] + 1, g[:, 0]), -1)
    np.add.at(diff, (g[:, 3] + 1, g[:, 2] + 1), 1)
    occupied = diff.cumsum(0).cumsum(1)[:gy, :gx] > 0
    cols = np.arange(gx)
    left = np.maximum.accumulate(np.where(occupied, cols, -1), axis=1)  # last text cell at or left of x
    right = np.minimum.accumulate(np.where(occupied, cols, gx)[:, ::-1], axis=1)[:, ::-1]
    gutter = ~occupied & (left >= 0) & (right < gx) & (right - left - 1 >= min_width * _CELLS_PER_HEIGHT)
    # vertical runs of empty cells, column by column: a run id grows at every occupied cell
    run = np.cumsum(occupied, axis=0)
    key = (cols[None, :] * (gy + 1) + run).ravel()
    count = np.bincount(key, weights=gutter.ravel(), minlength=gx * (gy + 1))
    # gutter cells cover the text rows beside the gutter: min_lines lines hold ~min_lines heights of text
    enough = count[key].reshape(gy, gx) >= min_lines * _CELLS_PER_HEIGHT
    # within such a run, an ordinary space between two words of a row is no barrier
    one_sided = (left < 0) | (right >= gx)
    # rows where the gutter narrows a little (justified lines) stay closed: half the width is enough there
    narrow = ~occupied & (right - left - 1 >= 0.5 * min_width * _CELLS_PER_HEIGHT)
    return enough & (narrow | (~occupied & one_sided)), cell


def barrier_right(boxes: np.ndarray, barrier: np.ndarray, cell: float) -> np.ndarray:
    """``float[N]``: for each pixel word box, the x (pixels) of the nearest barrier to its right on the grid
    row of its vertical centre (``inf`` when none). A word may join one on its right only if that word
    starts before this x."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    out = np.full(len(b), np.inf)
    if barrier.size == 0 or not barrier.any():
        return out
    gy, gx = barrier.shape
    cols = np.arange(gx)
    nxt = np.minimum.accumulate(np.where(barrier, cols, gx)[:, ::-1], axis=1)[:, ::-1]  # first barrier >= x
    row = np.clip(((b[:, 1] + b[:, 3]) / 2 / cell).astype(np.int64), 0, gy - 1)
    start = np.clip(np.ceil(b[:, 2] / cell).astype(np.int64), 0, gx - 1)
    found = nxt[row, start]
    has = found < gx
    out[has] = found[has] * cell
    return out


def gutter_lines(barrier: np.ndarray, cell: float, min_height: float = 0.0) -> np.ndarray:
    """``float[G, 3]`` pixel ``(x, y0, y1)`` of each gutter: a connected piece of the barrier, at the x of
    its tallest grid column, from its top to its bottom; pieces under ``min_height`` pixels are left out."""
    if barrier.size == 0 or not barrier.any():
        return np.zeros((0, 3))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(barrier.astype(np.uint8), connectivity=4)
    out = []
    for k in range(1, count):
        x, y, w, h, _ = stats[k]
        if h * cell < min_height:
            continue
        column = (labels[y : y + h, x : x + w] == k).sum(axis=0)
        out.append(((x + int(column.argmax()) + 0.5) * cell, y * cell, (y + h) * cell))
    return np.array(out, dtype=np.float64).reshape(-1, 3)
