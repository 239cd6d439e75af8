"""Equation numbers: a display formula's number ``(3)`` sits at the column's right edge, farther from the
formula than any word gap, so line grouping leaves it alone on its line (and a lone short line beside
running text then reads as a table cell). :func:`attach_numbers` joins it to its formula's line."""

from __future__ import annotations

import re

import numpy as np

__all__ = ["EQUATION_NUMBER", "attach_numbers"]

EQUATION_NUMBER = re.compile(r"^\(\d{1,3}[a-z]?\)$")


def attach_numbers(lines: list[list[int]], texts: list[str], boxes: np.ndarray, stop: np.ndarray) -> list[list[int]]:
    """``lines`` (word indices) with each one-word line reading ``(n)`` appended to the nearest line on its
    left on the same row (vertical overlap of half the smaller height) that no column gutter separates
    from it (``stop[i]``: the x no line from word ``i`` goes past); lines ordered as before."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    numbers = [k for k, ln in enumerate(lines) if len(ln) == 1 and EQUATION_NUMBER.match(texts[ln[0]])]
    if not numbers:
        return lines
    lines = [list(ln) for ln in lines]
    gone: set[int] = set()
    for k in numbers:
        n = lines[k][0]
        best, best_gap = None, np.inf
        for j, ln in enumerate(lines):
            if j == k or j in gone or j in numbers:
                continue
            last = max(ln, key=lambda i: b[i, 2])
            overlap = min(b[last, 3], b[n, 3]) - max(b[last, 1], b[n, 1])
            gap = b[n, 0] - b[last, 2]
            hmin = min(b[last, 3] - b[last, 1], b[n, 3] - b[n, 1])
            if gap > 0 and overlap >= 0.5 * hmin and stop[last] > b[n, 0] and gap < best_gap:
                best, best_gap = j, gap
        if best is not None:
            lines[best].append(n)
            gone.add(k)
    return [ln for k, ln in enumerate(lines) if k not in gone]
