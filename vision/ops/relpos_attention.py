"""Attention with SAM's decomposed relative-position bias (MViTv2): eager, SDPA and a fused Triton kernel.

For a ``(H, W)`` token grid the bias added to the logits of query ``i`` and key ``j`` is
``rel_h[i, j // W] + rel_w[i, j % W]``, where ``rel_h = q . Rh`` and ``rel_w = q . Rw`` are small
``(N, H)`` and ``(N, W)`` tables (``N = H * W``). ``impl`` picks how the ``N x N`` bias is applied:

* ``"math"``: explicit ``softmax(q k^T * scale + bias) v``, the reference computation;
* ``"sdpa"``: ``F.scaled_dot_product_attention`` with the bias materialised as an additive mask;
* ``"triton"``: a flash-attention kernel that adds the bias from the two small tables inside the kernel, so
  the ``N x N`` bias is never written to memory (CUDA only; every other device falls back to ``"sdpa"``).
"""

from __future__ import annotations

import importlib.util
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["AttentionImpl", "decomposed_rel_pos", "get_rel_pos", "load_triton_kernel", "relpos_attention",
           "triton_available"]

AttentionImpl = Literal["math", "sdpa", "triton"]
_FLASH: list = []  # the fused op once loaded (load_triton_kernel), so compiled callers read a plain global


def get_rel_pos(q_size: int, k_size: int, rel_pos: Tensor) -> Tensor:
    """Relative-position embeddings for every (query, key) pair along one axis.

    Args:
        q_size: query length along the axis; k_size: key length along the axis.
        rel_pos: ``(L, C)`` learned table; resized linearly when ``L != 2 * max(q_size, k_size) - 1``.

    Returns:
        ``(q_size, k_size, C)`` embeddings.
    """
    max_rel_dist = 2 * max(q_size, k_size) - 1
    if rel_pos.shape[0] != max_rel_dist:
        rel_pos = F.interpolate(rel_pos.reshape(1, rel_pos.shape[0], -1).permute(0, 2, 1),
                                size=max_rel_dist, mode="linear").reshape(-1, max_rel_dist).permute(1, 0)
    q_coords = torch.arange(q_size, device=rel_pos.device)[:, None] * max(k_size / q_size, 1.0)
    k_coords = torch.arange(k_size, device=rel_pos.device)[None, :] * max(q_size / k_size, 1.0)
    relative = (q_coords - k_coords) + (k_size - 1) * max(q_size / k_size, 1.0)
    return rel_pos[relative.long()]


def decomposed_rel_pos(q: Tensor, rel_pos_h: Tensor, rel_pos_w: Tensor, hw: tuple[int, int]) -> tuple[Tensor, Tensor]:
    """The two bias tables of one attention call.

    Args:
        q: ``(B, heads, N, C)`` unscaled queries, ``N = H * W``.
        rel_pos_h, rel_pos_w: ``(2H - 1, C)`` and ``(2W - 1, C)`` learned tables.
        hw: the token grid ``(H, W)``.

    Returns:
        ``rel_h (B, heads, N, H)`` and ``rel_w (B, heads, N, W)`` in ``q``'s dtype.
    """
    h, w = hw
    rh = get_rel_pos(h, h, rel_pos_h).to(q.dtype)
    rw = get_rel_pos(w, w, rel_pos_w).to(q.dtype)
    b, n_heads, _, c = q.shape
    r_q = q.reshape(b, n_heads, h, w, c)
    rel_h = torch.einsum("bnhwc,hkc->bnhwk", r_q, rh).reshape(b, n_heads, h * w, h)
    rel_w = torch.einsum("bnhwc,wkc->bnhwk", r_q, rw).reshape(b, n_heads, h * w, w)
    return rel_h, rel_w


def _dense_bias(rel_h: Tensor, rel_w: Tensor) -> Tensor:
    """``(B, heads, N, N)`` additive mask from the two tables (the memory the Triton kernel avoids)."""
    b, n_heads, n, h = rel_h.shape
    w = rel_w.shape[-1]
    return (rel_h[..., :, None] + rel_w[..., None, :]).reshape(b, n_heads, n, h * w)


def relpos_attention(q: Tensor, k: Tensor, v: Tensor, rel_pos_h: Tensor, rel_pos_w: Tensor,
                     hw: tuple[int, int], impl: AttentionImpl = "sdpa") -> Tensor:
    """Multi-head attention over a token grid with the decomposed relative-position bias.

    Args:
        q, k, v: ``(B, heads, N, C)`` with ``N = H * W`` (the last dimension must be contiguous).
        rel_pos_h, rel_pos_w: the learned ``(2H - 1, C)`` / ``(2W - 1, C)`` tables.
        hw: the token grid ``(H, W)``.
        impl: ``"math"``, ``"sdpa"`` or ``"triton"`` (see the module docstring).

    Returns:
        ``(B, N, heads, C)`` (token-major, so that merging heads is a free reshape).
    """
    rel_h, rel_w = decomposed_rel_pos(q, rel_pos_h, rel_pos_w, hw)
    if impl == "triton" and q.is_cuda and (_FLASH or load_triton_kernel()):
        return _FLASH[0](q, k, v, rel_h, rel_w, q.shape[-1] ** -0.5)
    if impl == "math":
        b, n_heads, n, _ = q.shape
        attn = (q * q.shape[-1] ** -0.5) @ k.transpose(-2, -1)  # (B, heads, N, N); the bias is added in place
        attn.view(b, n_heads, n, *hw).add_(rel_h[..., :, None]).add_(rel_w[..., None, :])
        return (attn.softmax(dim=-1) @ v).transpose(1, 2)
    if impl not in ("sdpa", "triton"):
        raise ValueError(f"unknown attention impl {impl!r}; expected 'math', 'sdpa' or 'triton'")
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=_dense_bias(rel_h, rel_w))
    return out.transpose(1, 2)


def triton_available() -> bool:
    """Whether the fused kernel can run here (Triton installed and a CUDA device present)."""
    return importlib.util.find_spec("triton") is not None and torch.cuda.is_available()


def load_triton_kernel() -> bool:
    """Import the fused kernel (:mod:`vision.ops._relpos_triton`) if Triton is installed; whether it is there.

    Kept out of this module's import: the registry imports every model module, and every OCR process would
    otherwise import Triton and register the op (~0.1 s). :func:`vision.fast.sam.set_attention_impl` calls it
    when ``"triton"`` is chosen, so a compiled encoder finds the op loaded."""
    if not _FLASH:
        try:
            from vision.ops._relpos_triton import relpos_flash
        except ImportError:  # Triton is optional: CPU-only installs run the SDPA path
            return False
        _FLASH.append(relpos_flash)
    return True
