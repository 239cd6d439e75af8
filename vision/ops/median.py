"""``np.median``'s value for the small arrays the page stages take medians of, without its overhead.

``np.median`` costs ~30 us a call whatever the size (argument checks, ``partition``, ``mean``; 2-core CPU),
and the layout, structure and script stages take ~55 medians of a handful of numbers per page.
:func:`median` sorts and returns the middle value, or the mean of the two middle ones computed in the input's
dtype as ``np.median`` computes it, so results are equal for finite values (tested), at ~4 us a call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["median"]


def median(values: Sequence[float] | np.ndarray) -> float:
    """The median of a 1-D sequence (flattened), as ``float(np.median(values))``; ``nan`` when empty."""
    v = np.sort(np.asarray(values).ravel())
    n = len(v)
    if n == 0:
        return float("nan")
    mid = n // 2
    if n % 2:
        return float(v[mid])
    if v.dtype.kind in "iub":  # np.median averages integers in float64
        return (float(v[mid - 1]) + float(v[mid])) / 2
    return float((v[mid - 1] + v[mid]) / 2)
