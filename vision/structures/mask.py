"""Run-length encoding of boolean page masks (``Region.mask``), so exports stay small and exact.

The encoding walks the mask in row-major (C) order and stores the lengths of alternating runs,
starting with a run of ``False`` (which is ``0`` long when the first pixel is ``True``)::

    {"shape": [height, width], "counts": [n_false, n_true, n_false, ...]}

Unlike COCO's RLE (column-major), row-major order matches numpy's default layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["mask_to_rle", "mask_from_rle"]


def mask_to_rle(mask: np.ndarray) -> dict[str, Any]:
    """Encode a 2-D mask (``H x W``; non-zero means inside) as row-major run lengths.

    Raises:
        ValueError: when ``mask`` is not two-dimensional.
    """
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"a mask must be 2-D (H x W), got shape {mask.shape}")
    flat = mask.astype(bool, copy=False).ravel()
    if flat.size == 0:
        return {"shape": [int(mask.shape[0]), int(mask.shape[1])], "counts": []}
    changes = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate(([0], changes, [flat.size]))
    counts = np.diff(bounds).tolist()
    if flat[0]:
        counts.insert(0, 0)
    return {"shape": [int(mask.shape[0]), int(mask.shape[1])], "counts": counts}


def mask_from_rle(rle: dict[str, Any]) -> np.ndarray:
    """Decode :func:`mask_to_rle` output back to a boolean ``H x W`` array.

    Raises:
        ValueError: when the shape or counts are malformed or do not cover the mask exactly.
    """
    if not isinstance(rle, dict) or "shape" not in rle or "counts" not in rle:
        raise ValueError("a run-length mask needs 'shape' and 'counts'")
    shape, counts = rle["shape"], rle["counts"]
    if not (isinstance(shape, list) and len(shape) == 2 and all(_is_count(v) for v in shape)):
        raise ValueError(f"mask shape must be [height, width] of non-negative ints, got {shape!r}")
    if not (isinstance(counts, list) and all(_is_count(v) for v in counts)):
        raise ValueError("mask counts must be a list of non-negative ints")
    total = shape[0] * shape[1]
    if sum(counts) != total:
        raise ValueError(f"mask counts sum to {sum(counts)}, expected {total} for shape {shape}")
    values = np.arange(len(counts)) % 2 == 1  # runs alternate False, True, False, ...
    return np.repeat(values, counts).reshape(shape[0], shape[1])


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
