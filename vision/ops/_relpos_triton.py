"""The fused Triton kernel of :mod:`vision.ops.relpos_attention` (flash attention that adds SAM's decomposed
relative-position bias inside the kernel).

Imported only when the ``"triton"`` attention runs (:func:`vision.ops.relpos_attention.load_triton_kernel`):
importing Triton and registering the custom op cost every process that merely imports the model registry.
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl
from torch import Tensor

__all__ = ["relpos_flash"]

_LOG2E = 1.4426950408889634

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
def relpos_flash(q: Tensor, k: Tensor, v: Tensor, rel_h: Tensor, rel_w: Tensor, scale: float) -> Tensor:
    """Fused attention as an opaque op, so that ``torch.compile`` calls the kernel instead of tracing it."""
    return _launch(q, k, v, rel_h, rel_w, scale)


@relpos_flash.register_fake
def _(q: Tensor, k: Tensor, v: Tensor, rel_h: Tensor, rel_w: Tensor, scale: float) -> Tensor:
    b, n_heads, n, d = q.shape
    return q.new_empty(b, n, n_heads, d)
