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

import os
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["AttentionImpl", "decomposed_rel_pos", "get_rel_pos", "relpos_attention", "triton_available"]

AttentionImpl = Literal["math", "sdpa", "triton"]
_LOG2E = 1.4426950408889634

try:  # Triton is optional: CPU-only installs run the SDPA path.
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the install
    triton = None


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
    if impl == "triton" and q.is_cuda and triton is not None:
        return _relpos_flash(q, k, v, rel_h, rel_w, q.shape[-1] ** -0.5)
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
    return triton is not None and torch.cuda.is_available()


# --------------------------------------------------------------------------------------------- Triton kernel
if triton is not None:

    # Tile shapes tried once per (N, D, row width) on the first call: FlashAttention-2's 128 x 64 tiles with 2-4
    # pipeline stages, half-height tiles, and two-row key blocks (row bias gathered instead of broadcast).
    _CONFIGS = [triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=warps, num_stages=stages)
                for m, n, warps, stages in ((128, 64, 8, 2), (128, 64, 8, 3), (128, 64, 4, 3), (64, 64, 4, 3),
                                            (64, 64, 4, 4), (128, 128, 8, 2), (128, 128, 8, 3))]

    @triton.heuristics({"ONE_ROW": lambda a: a["BLOCK_N"] == a["WK"],
                        "RELW_FIXED": lambda a: a["BLOCK_N"] % a["WK"] == 0})
    @triton.jit
    def _relpos_flash_kernel(
        Q, K, V, RH, RW, O,
        sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sob, soh, son,
        n_heads, N, D, WK, HK, qk_scale,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
        ONE_ROW: tl.constexpr, RELW_FIXED: tl.constexpr,
    ):
        """One program: ``BLOCK_M`` queries of one (batch, head) against all keys, online softmax (exp2).

        ``RH (BH, N, HK)`` and ``RW (BH, N, WK)`` are fp32, already multiplied by log2(e). ``ONE_ROW``: each key
        block is exactly one grid row (``BLOCK_N == WK``), so the row bias is a vector; ``RELW_FIXED``:
        ``BLOCK_N % WK == 0``, so the column bias tile is the same for every key block and loads once.
        """
        pid_m = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // n_heads
        h = bh % n_heads
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, BLOCK_D)
        m_ok = offs_m < N
        d_ok = offs_d < D
        q = tl.load(Q + b * sqb + h * sqh + offs_m[:, None] * sqn + offs_d[None, :],
                    mask=m_ok[:, None] & d_ok[None, :], other=0.0)
        k_base = K + b * skb + h * skh
        v_base = V + b * svb + h * svh
        rh_row = RH + bh.to(tl.int64) * N * HK + offs_m * HK  # [BLOCK_M] row starts
        rw_row = RW + bh.to(tl.int64) * N * WK + offs_m * WK
        m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
        if RELW_FIXED:
            bias_w = tl.load(rw_row[:, None] + (offs_n % WK)[None, :], mask=m_ok[:, None], other=0.0)
        for start_n in range(0, N, BLOCK_N):
            cols = start_n + offs_n
            n_ok = cols < N
            k = tl.load(k_base + cols[None, :] * skn + offs_d[:, None], mask=n_ok[None, :] & d_ok[:, None], other=0.0)
            qk = tl.dot(q, k) * qk_scale
            if ONE_ROW:
                qk += tl.load(rh_row + start_n // WK, mask=m_ok, other=0.0)[:, None]
            else:
                qk += tl.load(rh_row[:, None] + (cols // WK)[None, :], mask=m_ok[:, None] & n_ok[None, :], other=0.0)
            if RELW_FIXED:
                qk += bias_w
            else:
                qk += tl.load(rw_row[:, None] + (cols % WK)[None, :], mask=m_ok[:, None] & n_ok[None, :], other=0.0)
            qk = tl.where(n_ok[None, :], qk, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            alpha = tl.math.exp2(m_i - m_new)
            p = tl.math.exp2(qk - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_base + cols[:, None] * svn + offs_d[None, :], mask=n_ok[:, None] & d_ok[None, :], other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
        acc = acc / l_i[:, None]
        tl.store(O + b * sob + h * soh + offs_m[:, None] * son + offs_d[None, :], acc.to(O.dtype.element_ty),
                 mask=m_ok[:, None] & d_ok[None, :])


    _relpos_flash_tuned = triton.autotune(configs=_CONFIGS, key=["N", "D", "WK"])(_relpos_flash_kernel)


def _fixed_config(n: int, wk: int) -> dict[str, int]:
    """Tiles without autotuning (Triton's CPU interpreter has no device to time on): 128 x 64 tiles, the key
    block one grid row when the row is 16..128 wide."""
    return {"BLOCK_M": 128 if n >= 128 else max(16, triton.next_power_of_2(n)),
            "BLOCK_N": wk if wk in (16, 32, 64, 128) else 64, "num_warps": 8 if n >= 128 else 4, "num_stages": 2}


def _launch(q: Tensor, k: Tensor, v: Tensor, rel_h: Tensor, rel_w: Tensor, scale: float) -> Tensor:
    """Run the kernel: ``q, k, v (B, heads, N, C)``, ``rel_h (B, heads, N, H)``, ``rel_w (B, heads, N, W)``."""
    b, n_heads, n, d = q.shape
    hk, wk = rel_h.shape[-1], rel_w.shape[-1]
    q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))  # rows must be contiguous
    out = torch.empty(b, n, n_heads, d, device=q.device, dtype=q.dtype)  # token-major output
    rh = (rel_h.float() * _LOG2E).reshape(b * n_heads, n, hk).contiguous()
    rw = (rel_w.float() * _LOG2E).reshape(b * n_heads, n, wk).contiguous()
    tuned = q.is_cuda and os.environ.get("TRITON_INTERPRET", "0") != "1"
    kernel, fixed = (_relpos_flash_tuned, {}) if tuned else (_relpos_flash_kernel, _fixed_config(n, wk))
    kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_M"]), b * n_heads)](
        q, k, v, rh, rw, out,
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), out.stride(0), out.stride(2), out.stride(1),
        n_heads, n, d, wk, hk, scale * _LOG2E, BLOCK_D=max(16, triton.next_power_of_2(d)), **fixed,
    )
    return out


@torch.library.custom_op("vision::relpos_flash_attention", mutates_args=())
def _relpos_flash(q: Tensor, k: Tensor, v: Tensor, rel_h: Tensor, rel_w: Tensor, scale: float) -> Tensor:
    """Fused attention as an opaque op, so that ``torch.compile`` calls the kernel instead of tracing it."""
    return _launch(q, k, v, rel_h, rel_w, scale)


@_relpos_flash.register_fake
def _(q: Tensor, k: Tensor, v: Tensor, rel_h: Tensor, rel_w: Tensor, scale: float) -> Tensor:
    b, n_heads, n, d = q.shape
    return q.new_empty(b, n, n_heads, d)
