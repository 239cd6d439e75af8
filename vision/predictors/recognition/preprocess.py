"""Crop pre-processing shared by the recognition predictor and the training generator.

Both sides must resize identically, or the model meets pixels at inference it never saw in training:
a crop becomes RGB uint8 of height :data:`HEIGHT` with its aspect ratio kept (bilinear), and batches pad it
on the right with its own paper colour up to a bucket width.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
import torch
from PIL import Image

from vision.errors import VisionError
from vision.fast.compile import mark_dynamic_rows

__all__ = [
    "BUCKET",
    "HEIGHT",
    "MIN_ROWS",
    "STRIDE",
    "InvalidCrop",
    "as_rgb_array",
    "batch_crops",
    "bucket_width",
    "pad_batch",
    "pad_color",
    "pad_rows",
    "resize_to_height",
    "resized_widths",
]

HEIGHT = 32
STRIDE = 4  # input pixels per output frame (the backbone divides the width by 4)
BUCKET = 32  # bucket widths are multiples of this: at most BUCKET - 1 padded columns per crop
MIN_ROWS = 64  # compiled models get batches of a power of two rows, at least this many (see pad_rows)


class InvalidCrop(VisionError):
    """A crop that is not an image (wrong type, dtype, channel count or an empty size)."""


def as_rgb_array(crop: Any, index: int = 0) -> np.ndarray:
    """Convert a numpy ``HxW``/``HxWx{1,3,4}`` uint8 array, a ``[3, H, W]``/``[H, W, 3]`` tensor or a PIL image to
    ``HxWx3`` uint8 RGB. Float arrays/tensors are taken as [0, 1]."""
    if type(crop) is np.ndarray and crop.dtype == np.uint8 and crop.ndim == 3 and crop.shape[2] == 3 \
            and crop.shape[0] and crop.shape[1] and crop.flags.c_contiguous:
        return crop  # the common case, returned as is (what the general path below returns for it)
    if isinstance(crop, Image.Image):
        return np.asarray(crop.convert("RGB"))
    if isinstance(crop, torch.Tensor):
        t = crop.detach().cpu()
        if t.dim() == 3 and t.shape[0] in (1, 3) and t.shape[-1] not in (1, 3):
            t = t.permute(1, 2, 0)
        crop = t.numpy()
    if not isinstance(crop, np.ndarray):
        raise InvalidCrop(f"crop {index}", f"expected a numpy array, tensor or PIL image, got {type(crop).__name__}")
    arr = crop
    if arr.dtype != np.uint8:
        if not np.issubdtype(arr.dtype, np.floating):
            raise InvalidCrop(f"crop {index}", f"unsupported dtype {arr.dtype}")
        arr = (np.clip(arr, 0, 1) * 255 + 0.5).astype(np.uint8)
    if arr.ndim == 2:
        arr = arr[..., None]
    if arr.ndim != 3 or arr.shape[2] not in (1, 3, 4):
        raise InvalidCrop(f"crop {index}", f"expected HxW or HxWxC (C in 1, 3, 4), got shape {arr.shape}")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidCrop(f"crop {index}", f"empty crop of shape {arr.shape}")
    if arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    return np.ascontiguousarray(arr[..., :3])


def resize_to_height(img: np.ndarray, height: int = HEIGHT, min_width: int = 8, *,
                     out: np.ndarray | None = None) -> np.ndarray:
    """Resize ``HxWx3`` uint8 to ``height`` rows keeping the aspect ratio (width >= ``min_width``).

    ``out``: a ``height x new_width x 3`` uint8 array (a view into a batch) to write into instead of a new one.
    """
    h, w = img.shape[:2]
    new_w = max(min_width, round(w * height / h))
    interp = cv2.INTER_AREA if h > height else cv2.INTER_LINEAR
    if out is None:
        return cv2.resize(img, (new_w, height), interpolation=interp)
    if out.shape != (height, new_w, 3) or out.dtype != np.uint8:
        raise ValueError(f"out must be uint8 of shape {(height, new_w, 3)}, got {out.dtype} {out.shape}")
    cv2.resize(img, (new_w, height), dst=out, interpolation=interp)  # in place: row-strided views are kept
    return out


def resized_widths(sizes: np.ndarray, height: int = HEIGHT, min_width: int = 8) -> np.ndarray:
    """The widths :func:`resize_to_height` gives crops of ``sizes`` (``[N, 2]`` rows of ``(h, w)``), vectorised
    (``np.round`` rounds half to even, as Python's ``round`` does)."""
    sizes = np.asarray(sizes, dtype=np.int64).reshape(-1, 2)
    return np.maximum(min_width, np.round(sizes[:, 1] * height / sizes[:, 0])).astype(np.int64)


def bucket_width(width: int, bucket: int = BUCKET) -> int:
    """The batch width a crop of ``width`` pixels is padded to: the next multiple of ``bucket``."""
    return max(bucket, -(-width // bucket) * bucket)


def pad_color(img: np.ndarray) -> np.ndarray:
    """The paper colour used for padding: per-channel median of the crop's outer pixels (``[3]`` uint8)."""
    edge = np.sort(np.concatenate([img[0], img[-1], img[:, 0], img[:, -1]]), axis=0)  # [K, 3]
    k = len(edge)  # np.median's value (mean of the two middle ones when K is even), without its overhead
    return ((edge[(k - 1) // 2].astype(np.float64) + edge[k // 2]) / 2).astype(np.uint8)


def batch_crops(crops: Sequence[np.ndarray], width: int) -> torch.Tensor:
    """Stack ``32xWx3`` uint8 crops (each ``W <= width``) into ``[N, 3, 32, width]`` uint8, right-padded."""
    out = np.empty((len(crops), crops[0].shape[0], width, 3), np.uint8)
    for i, c in enumerate(crops):
        w = c.shape[1]
        out[i, :, :w] = c
        out[i, :, w:] = pad_color(c)
    return torch.from_numpy(out).permute(0, 3, 1, 2)


def pad_batch(x: torch.Tensor, widths: torch.Tensor) -> torch.Tensor:
    """:func:`batch_crops`'s padding, on ``x``'s device: the same bytes, without per-crop host work.

    Args:
        x: ``[N, H, W, 3]`` uint8, crop ``i`` in columns ``< widths[i]``, anything after them.
        widths: ``[N]`` integer widths (``1 <= widths[i] <= W``) on ``x``'s device.

    Returns:
        ``[N, 3, H, W]`` uint8 (a channels-last view), columns past ``widths[i]`` set to :func:`pad_color` of crop
        ``i``: the median of its border pixels (mean of the two middle ones, truncated), per channel.
    """
    n, h, w, _ = x.shape
    widths = widths.long()
    inside = (torch.arange(w, device=x.device)[None, :] < widths[:, None])[:, None, :, None]  # [N, 1, W, 1]
    right = x[torch.arange(n, device=x.device), :, widths - 1]  # [N, H, 3] last column of each crop
    # Top and bottom rows past the crop count as 255, the largest value: ranks below the crop's own border
    # size K then fall on the crop's own pixels. A per-channel histogram gives the ranks (a sort is 2x slower
    # on our 2-core CPU, where this runs too). No host data is created here: nothing waits for the device.
    rows = torch.where(inside, torch.stack((x[:, 0], x[:, -1]), 1), 255).flatten(1, 2)  # [N, 2W, 3]
    channel = torch.arange(0, 768, 256, device=x.device)  # [3] each channel's 256 histogram bins
    edge = torch.cat([rows, x[:, :, 0], right], 1).long() + channel  # [N, 2W + 2H, 3] bin of each value
    ones = torch.ones((), device=x.device).expand(n, edge[0].numel())
    cum = torch.zeros(n, 768, device=x.device).scatter_add_(1, edge.flatten(1), ones).view(n, 3, 256).cumsum(2)
    k = (2 * widths + 2 * h).float()[:, None, None].expand(n, 3, 1)  # border pixels per crop (corners twice)
    lo = torch.searchsorted(cum, (k - 1).div(2, rounding_mode="floor"), right=True)  # [N, 3, 1] value at rank
    hi = torch.searchsorted(cum, k.div(2, rounding_mode="floor"), right=True)
    color = ((lo + hi) // 2).to(torch.uint8).transpose(1, 2)[:, None]  # [N, 1, 1, 3] the median
    return (x * inside + color * ~inside).permute(0, 3, 1, 2)  # multiply-add: 2.5x faster than where on CPU


def pad_rows(x: torch.Tensor, cap: int, minimum: int = MIN_ROWS) -> torch.Tensor:
    """Repeat the last row of ``x [n, ...]`` up to the next power of two of rows (at least ``minimum``, at
    most ``cap``, the batch size), and mark the batch dimension dynamic for ``torch.compile``.

    Why: a compiled recognizer then builds one graph per width bucket, cuDNN sees at most a handful of batch
    sizes per bucket (it builds plans per shape, ~0.3 s each on an H100), and a bucket's last, partial batch
    costs at most as many padding rows as real ones. Padding every batch to the full batch size would run
    ~2x the crops through the model in OCR pipelines (a letter page's ~150 words spread over six buckets,
    each ending in a mostly padded batch of 1024).
    """
    n = x.shape[0]
    total = min(max(cap, n), max(minimum, 1 << (n - 1).bit_length())) if n else 0
    if total > n:
        x = torch.cat([x, x[-1:].expand(total - n, *x.shape[1:])])
    return mark_dynamic_rows(x)
