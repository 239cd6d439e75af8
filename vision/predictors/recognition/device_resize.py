"""Resize recognition crops on the model's device: the host packs raw bytes, the device resizes whole batches.

The host path (:func:`~vision.predictors.recognition.batching.fill_batch`) resizes each crop with ``cv2`` into the
batch's staging array: ~18 us of host time per crop, which bounds a GPU's throughput on slow host cores. Here
the host does one ``memcpy`` per crop into a flat uint8 buffer (pinned on CUDA) plus vectorised numpy
bookkeeping (:func:`pack_batch`), and the device (:func:`resize_packed`) gathers each crop into a
page padded with replicated edges and resizes every piece of the batch with
:func:`~vision.ops.crops.roi_crops` (one ``roi_align`` call per size group).

``roi_align`` with ``aligned=True`` samples output pixel ``j`` of a crop at ``(j + 0.5) * scale - 0.5``, as
``cv2.INTER_LINEAR`` does, and its adaptive sampling ratio (``ceil(scale)`` samples per axis) averages
several bilinear samples when shrinking, close to ``cv2.INTER_AREA`` (exact for integer factors). Edge
pixels are clamped as OpenCV clamps them: the gather replicates each crop's last row and column. Chunks of
crops split past ``max_width`` are cut from the same sampling grid as the whole crop, so a chunk equals the
columns of the whole resized crop it stands for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import torch
from torch import Tensor

from vision.predictors.recognition.batching import Plan
from vision.ops.crops import roi_crops

__all__ = ["FIELDS", "Packed", "pack_batch", "resize_packed"]

# Rows of Packed.meta, per piece: byte offset of its crop in ``flat``, the crop's height and width, the first
# raw column and the column count of the window the piece reads, the piece's start and width in the resized
# crop, the resized crop's width, and the piece's row in the batch.
FIELDS = ("offset", "height", "width", "first", "columns", "start", "span", "resized", "row")


@dataclass(frozen=True)
class Packed:
    """One batch's raw crops, packed on the host by :func:`pack_batch` for :func:`resize_packed`.

    Attributes:
        flat: ``[L]`` uint8 tensor (pinned on CUDA): the ``h x w x 3`` bytes of each crop, back to back.
        meta: ``[len(FIELDS), n]`` int64 array, one column per piece, pieces in size-group order.
        groups: ``(first, end, height, width)`` per size group: its columns of ``meta`` and its page size.
        width: the batch's (bucket) width.
    """

    flat: Tensor
    meta: np.ndarray
    groups: tuple[tuple[int, int, int, int], ...]
    width: int


def pack_batch(arrays: Sequence[np.ndarray], sizes: np.ndarray, resized: np.ndarray, plan: Plan,
               pieces: np.ndarray, width: int, pin: bool = False) -> Packed:
    """Pack the crops of a batch's ``pieces`` (each crop once, even when several of its chunks are in it).

    Args:
        arrays: the call's ``HxWx3`` uint8 C-contiguous crops.
        sizes: ``[N, 2]`` their ``(h, w)``.
        resized: ``[N]`` their widths once resized to the model's height (``resized_widths``).
        plan: the call's plan; ``pieces`` (``[n]``) are the batch's pieces in batch order.
        width: the batch's width.
        pin: allocate ``flat`` in pinned memory (for an asynchronous copy to CUDA).
    """
    owner = plan.owner[pieces]
    crops, slot = owner, np.arange(len(owner))
    if plan.split[pieces].any():  # several chunks of one crop may share the batch: pack the crop once
        crops, slot = np.unique(owner, return_inverse=True)
    nbytes = sizes[crops, 0] * sizes[crops, 1] * 3
    offset = np.cumsum(nbytes) - nbytes
    flat = torch.empty(int(nbytes.sum()), dtype=torch.uint8, pin_memory=pin)
    np.concatenate([arrays[o].reshape(-1) for o in crops.tolist()], out=flat.numpy())  # one memcpy per crop
    h, w, rw = sizes[owner, 0], sizes[owner, 1], resized[owner]
    start, span = plan.start[pieces], plan.width[pieces]
    # the raw columns a piece samples, plus one on each side: bilinear taps reach past the sampled span
    first = np.maximum(0, start * w // rw - 1)
    end = np.minimum(w, -(-(start + span) * w // rw) + 1)
    group = np.ceil(2 * np.log2(h)).astype(np.int64)  # heights within a factor sqrt(2): little padding waste
    order = np.argsort(group, kind="stable")
    rows = np.arange(len(owner))
    meta = np.stack([offset[slot], h, w, first, end - first, start, span, rw, rows])[:, order]
    bounds = [0, *(np.flatnonzero(np.diff(group[order])) + 1).tolist(), len(owner)]
    groups = tuple((a, b, int(meta[1, a:b].max()), int(meta[4, a:b].max())) for a, b in pairwise(bounds))
    return Packed(flat, meta.astype(np.int64, copy=False), groups, width)


def resize_packed(flat: Tensor, meta: Tensor, groups: Sequence[tuple[int, int, int, int]], *, height: int,
                  out_width: int) -> Tensor:
    """Resize every piece of a packed batch on ``flat``'s device, without reading anything back to the host.

    Args:
        flat: ``[L]`` uint8 packed crops (:attr:`Packed.flat`, on the device).
        meta: ``[len(FIELDS), n]`` int64 (:attr:`Packed.meta`, on the same device).
        groups: :attr:`Packed.groups` (Python ints: they set the shapes).
        height: output height (the model's).
        out_width: the batch's width (``>=`` every piece's ``span``).

    Returns:
        ``[n, height, out_width, 3]`` uint8 (a channels-last view), piece ``j`` of the batch in its first
        ``span`` columns, what lies after them unspecified (``pad_batch`` overwrites it).
    """
    offset, h, w, first, columns, start, span, resized, row = meta.unbind(0)
    pixels = flat.view(-1, 3)  # every crop has a whole number of pixels
    scale = w.double() / resized  # raw columns per resized column
    boxes = torch.stack([start * scale - first, torch.zeros_like(scale), (start + span) * scale - first,
                         h.double()], 1).float()  # [n, 4] pixel boxes in each piece's window
    # ranges made once and sliced per group: fewer kernel launches, which cost host time on a GPU
    steps = torch.arange(max(max(g[1] - g[0], g[2], g[3]) for g in groups), device=flat.device)
    crops = []
    for a, b, hp, wp in groups:
        ys = torch.minimum(steps[:hp], h[a:b, None] - 1)  # [g, hp] rows, the last one repeated
        xs = first[a:b, None] + torch.minimum(steps[:wp], columns[a:b, None] - 1)  # [g, wp] columns, likewise
        index = (offset[a:b] // 3)[:, None, None] + ys[:, :, None] * w[a:b, None, None] + xs[:, None, :]
        pages = pixels[index].permute(0, 3, 1, 2).contiguous().float()  # [g, 3, hp, wp]
        crops.append(roi_crops(pages, boxes[a:b], span[a:b], height=height, out_width=out_width,
                               batch_index=steps[:b - a]))
    out = torch.cat(crops) if len(crops) > 1 else crops[0]  # [n, 3, height, out_width], size-group order
    out = torch.empty_like(out).index_copy_(0, row, out)  # batch order
    return out.round_().clamp_(0, 255).to(torch.uint8).permute(0, 2, 3, 1)
