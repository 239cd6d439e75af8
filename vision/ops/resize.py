"""Image resizing on any torch device with OpenCV's results: area averaging when shrinking, bilinear when
enlarging.

A GPU pipeline that resizes pages on the host pays ~20 ms of one core per letter page (``cv2.INTER_AREA`` at a
non-integer factor); here a resize is two matrix products with per-axis weight matrices (``[dst, src]``, built
once per size pair), so the host only ships the page's bytes. The weights are OpenCV's: for shrinking, each
output pixel is the mean of the source span it covers, partial pixels weighted by their overlap
(``INTER_AREA``); for enlarging, bilinear with half-pixel centres and edge clamping (``INTER_LINEAR``).
Results are rounded half to even and saturated like OpenCV's ``uint8`` output; what is left is float
accumulation order (at most one grey level, on a few pixels).
"""

from __future__ import annotations

from functools import lru_cache

import torch
from torch import Tensor

__all__ = ["resize_weights", "resize_uint8"]


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
def resize_weights(src: int, dst: int, device: torch.device = torch.device("cpu")) -> Tensor:
    """``float32[dst, src]`` weights resizing one axis from ``src`` to ``dst`` pixels (rows sum to 1)."""
    if src < 1 or dst < 1:
        raise ValueError(f"sizes must be positive, got {src} -> {dst}")
    if src == dst:
        weights = torch.eye(src, dtype=torch.float64)
    else:
        weights = _area(src, dst) if dst < src else _linear(src, dst)
    return weights.to(device=device, dtype=torch.float32)


def resize_uint8(image: Tensor, size: tuple[int, int]) -> Tensor:
    """Resize ``uint8[H, W, C]`` (on any device) to ``uint8[h, w, C]`` = ``size``, as ``cv2.resize`` does with
    ``INTER_AREA`` when shrinking an axis and ``INTER_LINEAR`` when enlarging it."""
    if image.dim() != 3 or image.dtype != torch.uint8:
        raise ValueError(f"expected uint8[H, W, C], got {image.dtype} of shape {tuple(image.shape)}")
    h, w = int(size[0]), int(size[1])
    rows = resize_weights(image.shape[0], h, image.device)  # [h, H]
    cols = resize_weights(image.shape[1], w, image.device)  # [w, W]
    x = image.permute(2, 0, 1).float()  # [C, H, W]
    out = rows @ x @ cols.T  # [C, h, w]
    return out.round_().clamp_(0, 255).to(torch.uint8).permute(1, 2, 0)
