"""Differentiable-binarization loss and its targets (Liao et al. 2020).

Targets (:func:`db_targets`, numpy, made in data-loader workers): a word box of short side ``s`` becomes a
*kernel* shrunk by ``shrink * s`` on every side (the probability target), and a threshold band from
``shrink * s`` inside to ``shrink * s`` outside its edges where the threshold target rises from 0.3 (far)
to 0.7 (on the edge). Loss (:func:`db_loss`, torch): BCE on the probability logits with 3:1 hard-negative
mining + Dice on the approximate binary map ``sigmoid(k (P - T))`` + ``beta`` x L1 on the threshold band.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["THRESH_MAX", "THRESH_MIN", "db_loss", "db_targets"]

THRESH_MIN, THRESH_MAX = 0.3, 0.7  # DBNet's threshold-map range


def _span(a: float, b: float, n: int) -> tuple[int, int]:
    """Pixel indices ``[i0, i1)`` whose centres ``i + 0.5`` lie in ``[a, b]``, clipped to ``[0, n)``."""
    return max(int(np.ceil(a - 0.5)), 0), min(int(np.floor(b - 0.5)) + 1, n)


def db_targets(
    height: int,
    width: int,
    boxes: np.ndarray,
    ignore: np.ndarray | None = None,
    shrink: float = 0.25,
    min_side: float = 4.0,
) -> dict[str, np.ndarray]:
    """Training targets for word ``boxes (float[N, 4])`` in pixels of a ``height x width`` image.

    Returns ``uint8[H, W]`` maps: ``gt`` (kernels, 0/1), ``mask`` (0 on ignore boxes and on words whose
    short side is under ``min_side`` px: too small to learn, so neither text nor background), ``thresh``
    (threshold target x 255) and ``thresh_mask`` (the bands, 0/1).
    """
    gt = np.zeros((height, width), np.uint8)
    mask = np.ones((height, width), np.uint8)
    thresh = np.zeros((height, width), np.float32)
    tmask = np.zeros((height, width), np.uint8)
    for x0, y0, x1, y1 in np.asarray(boxes, np.float64).reshape(-1, 4):
        side = min(x1 - x0, y1 - y0)
        if side <= 0:
            continue
        if side < min_side:
            (c0, c1), (r0, r1) = _span(x0, x1, width), _span(y0, y1, height)
            mask[r0:r1, c0:c1] = 0
            continue
        d = shrink * side
        (c0, c1), (r0, r1) = _span(x0 + d, x1 - d, width), _span(y0 + d, y1 - d, height)
        gt[r0:r1, c0:c1] = 1
        (c0, c1), (r0, r1) = _span(x0 - d, x1 + d, width), _span(y0 - d, y1 + d, height)
        if c1 <= c0 or r1 <= r0:
            continue
        xs = np.arange(c0, c1, dtype=np.float32) + 0.5
        ys = np.arange(r0, r1, dtype=np.float32)[:, None] + 0.5
        dx = np.maximum(np.maximum(x0 - xs, xs - x1), 0)  # outside distance per axis (0 inside)
        dy = np.maximum(np.maximum(y0 - ys, ys - y1), 0)
        inside = np.minimum(np.minimum(xs - x0, x1 - xs), np.minimum(ys - y0, y1 - ys))  # >0 inside
        dist = np.where((dx == 0) & (dy == 0), inside, np.sqrt(dx**2 + dy**2))
        value = 1.0 - np.clip(dist / d, 0, 1)
        np.maximum(thresh[r0:r1, c0:c1], value, out=thresh[r0:r1, c0:c1])
        tmask[r0:r1, c0:c1] = 1
    for x0, y0, x1, y1 in np.asarray(ignore if ignore is not None else [], np.float64).reshape(-1, 4):
        (c0, c1), (r0, r1) = _span(x0, x1, width), _span(y0, y1, height)
        mask[r0:r1, c0:c1] = 0
    t = np.round((THRESH_MIN + (THRESH_MAX - THRESH_MIN) * thresh) * 255).astype(np.uint8)
    return {"gt": gt, "mask": mask, "thresh": t, "thresh_mask": tmask}


def db_loss(
    logits: Tensor,
    thresh: Tensor,
    gt: Tensor,
    mask: Tensor,
    thresh_gt: Tensor,
    thresh_mask: Tensor,
    *,
    k: float = 50.0,
    alpha: float = 1.0,
    beta: float = 10.0,
    ohem_ratio: float = 3.0,
) -> tuple[Tensor, dict[str, Tensor]]:
    """DB loss of one batch; all maps ``float[N, 1, H, W]`` (targets as 0/1 floats, ``thresh_gt`` in [0, 1]).

    Returns the total and its parts (``prob``, ``binary``, ``thresh``) for logging.
    """
    logits, thresh = logits.float(), thresh.float()
    pos = gt * mask
    neg = (1 - gt) * mask
    bce = F.binary_cross_entropy_with_logits(logits, gt, reduction="none")
    n_pos = pos.sum()
    n_neg = torch.minimum(neg.sum(), (n_pos * ohem_ratio).clamp(min=100))
    # Hard negatives: the n_neg largest negative losses. A full sort plus a rank mask instead of topk: topk
    # with k in the millions is slow on GPU, and the mask needs no host sync for k.
    ranked = torch.sort((bce * neg).flatten(), descending=True).values
    hard = (ranked * (torch.arange(ranked.numel(), device=ranked.device) < n_neg)).sum()
    l_prob = ((bce * pos).sum() + hard) / (n_pos + n_neg + 1e-6)
    prob = torch.sigmoid(logits)
    binary = torch.sigmoid(k * (prob - thresh))
    inter = (binary * gt * mask).sum()
    l_bin = 1 - 2 * inter / ((binary * mask).sum() + (gt * mask).sum() + 1e-6)
    l_thr = (torch.abs(thresh - thresh_gt) * thresh_mask).sum() / (thresh_mask.sum() + 1e-6)
    total = l_prob + alpha * l_bin + beta * l_thr
    return total, {"prob": l_prob.detach(), "binary": l_bin.detach(), "thresh": l_thr.detach()}
