"""Image resizing on any torch device with OpenCV's results: area averaging when shrinking, bilinear when
enlarging.

A GPU pipeline that resizes pages on the host pays ~20 ms of one core per letter page (``cv2.INTER_AREA`` at a
non-integer factor); here the host only ships the page's bytes. Each axis is resized by its few taps per
output pixel (:func:`resize_taps`: the non-zero entries of the ``[dst, src]`` weight matrix, built once per
size pair), a gather and a weighted sum: a dense product with the mostly-zero weight matrix would cost ~20
GFLOP per letter page, where the taps read each source pixel a few times. The weights are
OpenCV's: for shrinking, each output pixel is the mean of the source span it covers, partial pixels weighted
by their overlap (``INTER_AREA``); for enlarging, bilinear with half-pixel centres and edge clamping
(``INTER_LINEAR``).
Results are rounded half to even and saturated like OpenCV's ``uint8`` output; what is left is float
accumulation order (at most one grey level, on a few pixels).
"""

from __future__ import annotations

from functools import lru_cache

import torch
from torch import Tensor

__all__ = ["resize_taps", "resize_uint8", "resize_weights"]

_CPU = torch.device("cpu")


def _area(src: int, dst: int) -> Tensor:
    scale = src / dst
    lo = torch.arange(dst, dtype=torch.float64) * scale
    edges = torch.arange(src + 1, dtype=torch.float64)
    overlap = torch.minimum(lo[:, None] + scale, edges[None, 1:]) - torch.maximum(lo[:, None], edges[None, :-1])
    return overlap.clamp_min(0) / scale


def _linear(src: int, dst: int) -> Tensor:
    x = ((torch.arange(dst, dtype=torch.float64) + 0.5) * (src / dst) - 0.5).clamp(0, src - 1)
    left = x.floor().long()
    right = (left + 1).clamp(max=src - 1)
    frac = x - left
    weights = torch.zeros(dst, src, dtype=torch.float64)
    rows = torch.arange(dst)
    weights.index_put_((rows, left), 1 - frac, accumulate=True)
    weights.index_put_((rows, right), frac, accumulate=True)
    return weights


@lru_cache(maxsize=32)
def resize_weights(src: int, dst: int, device: torch.device = _CPU) -> Tensor:
    """``float32[dst, src]`` weights resizing one axis from ``src`` to ``dst`` pixels (rows sum to 1)."""
    if src < 1 or dst < 1:
        raise ValueError(f"sizes must be positive, got {src} -> {dst}")
    if src == dst:
        weights = torch.eye(src, dtype=torch.float64)
    else:
        weights = _area(src, dst) if dst < src else _linear(src, dst)
    return weights.to(device=device, dtype=torch.float32)


def _area_taps(src: int, dst: int) -> tuple[Tensor, Tensor]:
    """Banded :func:`_area`: for each output pixel, the source pixels its span touches and their overlaps."""
    scale = src / dst
    lo = torch.arange(dst, dtype=torch.float64) * scale
    k = int(-(-scale // 1)) + 1  # a span of `scale` pixels touches at most ceil(scale) + 1 of them
    index = lo.floor().long()[:, None] + torch.arange(k)  # [dst, K]
    overlap = torch.minimum(lo[:, None] + scale, index + 1.0) - torch.maximum(lo[:, None], index.double())
    return index, torch.where(index < src, overlap.clamp_min(0) / scale, 0.0)


def _linear_taps(src: int, dst: int) -> tuple[Tensor, Tensor]:
    """Banded :func:`_linear`: the two source pixels of each output pixel and their weights."""
    x = ((torch.arange(dst, dtype=torch.float64) + 0.5) * (src / dst) - 0.5).clamp(0, src - 1)
    left = x.floor()
    frac = x - left
    return left.long()[:, None] + torch.arange(2), torch.stack([1 - frac, frac], dim=1)


@lru_cache(maxsize=256)
def resize_taps(src: int, dst: int, device: torch.device = _CPU) -> tuple[Tensor, Tensor]:
    """:func:`resize_weights` as taps: ``int64[dst, K]`` source indices and ``float32[dst, K]`` weights,
    ``K`` the most source pixels an output pixel can read (the weights are banded); taps past the source
    weigh 0. Built in ``O(dst * K)``, without the dense matrix: pages of new sizes each need their own."""
    if src < 1 or dst < 1:
        raise ValueError(f"sizes must be positive, got {src} -> {dst}")
    if src == dst:
        index, taps = torch.arange(src)[:, None], torch.ones(src, 1, dtype=torch.float64)
    else:
        index, taps = _area_taps(src, dst) if dst < src else _linear_taps(src, dst)
    taps = torch.where(index < src, taps, 0.0)
    return index.clamp(max=src - 1).to(device), taps.to(device=device, dtype=torch.float32)


def _resize_axis(x: Tensor, dst: int, dim: int) -> Tensor:
    """Resize float ``x [C, H, W]`` along ``dim`` (1: rows, 2: columns) to ``dst`` pixels."""
    if x.shape[dim] == dst:
        return x
    index, taps = resize_taps(x.shape[dim], dst, x.device)
    if dim == 1:
        return (x[:, index] * taps[None, :, :, None]).sum(2)  # [C, dst, K, W] -> [C, dst, W]
    return (x[:, :, index] * taps).sum(3)  # [C, H, dst, K] -> [C, H, dst]


def resize_uint8(image: Tensor, size: tuple[int, int]) -> Tensor:
    """Resize ``uint8[H, W, C]`` (on any device) to ``uint8[h, w, C]`` = ``size``, as ``cv2.resize`` does with
    ``INTER_AREA`` when shrinking an axis and ``INTER_LINEAR`` when enlarging it."""
    if image.dim() != 3 or image.dtype != torch.uint8:
        raise ValueError(f"expected uint8[H, W, C], got {image.dtype} of shape {tuple(image.shape)}")
    h, w = int(size[0]), int(size[1])
    x = image.permute(2, 0, 1).float()  # [C, H, W]
    out = _resize_axis(_resize_axis(x, h, 1), w, 2)  # [C, h, w]
    return out.round_().clamp_(0, 255).to(torch.uint8).permute(1, 2, 0)
