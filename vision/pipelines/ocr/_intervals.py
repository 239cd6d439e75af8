"""Interval helpers of the reading order: empty gaps between intervals, row-by-row order of boxes, and the
union boxes of groups."""

from __future__ import annotations

import numpy as np

__all__ = ["gaps", "group_boxes", "row_order", "widest_gap"]


def gaps(lo: np.ndarray, hi: np.ndarray) -> list[tuple[float, float]]:
    """Empty intervals ``(start, end)`` between the union of ``[lo_i, hi_i]`` intervals."""
    order = np.argsort(lo, kind="stable")
    starts, reach = lo[order], np.maximum.accumulate(hi[order])
    empty = starts[1:] > reach[:-1]
    return list(zip(reach[:-1][empty].tolist(), starts[1:][empty].tolist()))


def widest_gap(lo: np.ndarray, hi: np.ndarray) -> tuple[float, float] | None:
    """The widest of :func:`gaps`, or ``None``."""
    found = gaps(lo, hi)
    return max(found, key=lambda g: g[1] - g[0]) if found else None


def row_order(boxes: np.ndarray, idx: np.ndarray) -> list[int]:
    """``idx`` read row by row: a box joins the row whose first box it overlaps vertically by half the
    smaller height (boxes taken by vertical centre), rows top to bottom, boxes left to right."""
    sub = boxes[idx]
    rows: list[list[int]] = []
    for k in np.argsort((sub[:, 1] + sub[:, 3]) / 2, kind="stable"):
        if rows:
            first = sub[rows[-1][0]]
            overlap = min(first[3], sub[k, 3]) - max(first[1], sub[k, 1])
            if overlap >= 0.5 * min(first[3] - first[1], sub[k, 3] - sub[k, 1]):
                rows[-1].append(int(k))
                continue
        rows.append([int(k)])
    return [int(idx[k]) for row in rows for k in sorted(row, key=lambda j: sub[j, 0])]


def group_boxes(boxes: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    """``[G, 4]`` union boxes of groups of rows of ``boxes`` (one reduceat per corner)."""
    flat = boxes[np.concatenate(groups)]
    starts = np.cumsum([0] + [len(g) for g in groups[:-1]])
    return np.stack(
        [
            np.minimum.reduceat(flat[:, 0], starts),
            np.minimum.reduceat(flat[:, 1], starts),
            np.maximum.reduceat(flat[:, 2], starts),
            np.maximum.reduceat(flat[:, 3], starts),
        ],
        axis=1,
    )
