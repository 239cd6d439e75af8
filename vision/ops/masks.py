"""Tensor functions on predicted masks: stability score, boxes, point grids, crops and box NMS.

All work on the masks' device, batched, without host round trips (the automatic mask generator keeps its
masks on the GPU until the survivors are copied out).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torchvision.ops import batched_nms

__all__ = [
    "box_nms",
    "boxes_near_crop_edge",
    "crop_boxes",
    "mask_iou",
    "masks_to_boxes",
    "point_grid",
    "stability_score",
]


def stability_score(logits: Tensor, threshold: float = 0.0, offset: float = 1.0) -> Tensor:
    """IoU between the masks ``logits > threshold + offset`` and ``logits > threshold - offset``.

    Args:
        logits: ``(..., H, W)`` mask logits.

    Returns:
        ``(...)`` float scores in [0, 1] (1 when both masks are empty).
    """
    high = (logits > threshold + offset).flatten(-2).sum(-1, dtype=torch.int32)
    low = (logits > threshold - offset).flatten(-2).sum(-1, dtype=torch.int32)  # high is inside low
    return torch.where(low > 0, high / low.clamp(min=1), torch.ones_like(high, dtype=torch.float32))


def masks_to_boxes(masks: Tensor) -> Tensor:
    """Tight pixel boxes ``(..., 4)`` as ``(x0, y0, x1, y1)`` with inclusive ``x1, y1`` around boolean
    ``(..., H, W)`` masks; ``(0, 0, 0, 0)`` for empty masks. Unlike ``torchvision.ops.masks_to_boxes`` it
    needs no per-mask loop."""
    h, w = masks.shape[-2:]
    rows = masks.any(-1)  # (..., H)
    cols = masks.any(-2)  # (..., W)
    ys = torch.arange(h, device=masks.device)
    xs = torch.arange(w, device=masks.device)
    y1 = torch.where(rows, ys, -1).amax(-1)
    y0 = torch.where(rows, ys, h).amin(-1)
    x1 = torch.where(cols, xs, -1).amax(-1)
    x0 = torch.where(cols, xs, w).amin(-1)
    boxes = torch.stack([x0, y0, x1, y1], -1)
    return torch.where((x1 >= 0)[..., None], boxes, torch.zeros_like(boxes))


def mask_iou(a: Tensor, b: Tensor) -> Tensor:
    """IoU of boolean masks ``a, b (..., H, W)`` (broadcast), 1 where both are empty."""
    inter = (a & b).flatten(-2).sum(-1).float()
    union = (a | b).flatten(-2).sum(-1).float()
    return torch.where(union > 0, inter / union.clamp(min=1), torch.ones_like(union))


def point_grid(n_per_side: int) -> Tensor:
    """``(n^2, 2)`` ``(x, y)`` points at the centres of an ``n x n`` grid over [0, 1]^2, row by row."""
    side = (torch.arange(n_per_side, dtype=torch.float64) + 0.5) / n_per_side
    y, x = torch.meshgrid(side, side, indexing="ij")
    return torch.stack([x.flatten(), y.flatten()], -1)


def crop_boxes(size: tuple[int, int], n_layers: int, overlap_ratio: float = 512 / 1500) -> list[tuple[int, tuple[int, int, int, int]]]:
    """The whole image, then ``(2^i)^2`` overlapping crops for each layer ``i = 1..n_layers``.

    Args:
        size: ``(H, W)`` of the image.
        overlap_ratio: overlap of neighbouring first-layer crops as a fraction of the short side.

    Returns:
        ``(layer, (x0, y0, x1, y1))`` pixel crops, the full image first.
    """
    h, w = size
    out = [(0, (0, 0, w, h))]
    for layer in range(1, n_layers + 1):
        n = 2**layer
        overlap = int(overlap_ratio * min(h, w) * (2 / n))
        crop_w = math.ceil((overlap * (n - 1) + w) / n)
        crop_h = math.ceil((overlap * (n - 1) + h) / n)
        for x0 in (int((crop_w - overlap) * i) for i in range(n)):
            for y0 in (int((crop_h - overlap) * i) for i in range(n)):
                out.append((layer, (x0, y0, min(x0 + crop_w, w), min(y0 + crop_h, h))))
    return out


def boxes_near_crop_edge(boxes: Tensor, crop: tuple[int, int, int, int], image: tuple[int, int, int, int],
                         atol: float = 20.0) -> Tensor:
    """``(N,)`` whether each image-frame box ``(N, 4)`` touches an edge of ``crop`` that is not an image edge
    (such masks are probably cut off by the crop)."""
    crop_t = torch.tensor(crop, dtype=torch.float32, device=boxes.device)
    image_t = torch.tensor(image, dtype=torch.float32, device=boxes.device)
    boxes = boxes.float()
    near_crop = torch.isclose(boxes, crop_t, atol=atol, rtol=0)
    near_image = torch.isclose(boxes, image_t, atol=atol, rtol=0)
    return (near_crop & ~near_image).any(-1)


def box_nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Indices of the boxes ``(N, 4)`` kept by class-agnostic NMS (``torchvision.ops.batched_nms``), best first."""
    return batched_nms(boxes.float(), scores.float(), torch.zeros_like(scores, dtype=torch.int64), iou_threshold)
