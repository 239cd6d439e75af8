"""Relative-position attention: eager math vs SDPA vs the reference formula, and the Triton kernel (in
Triton's CPU interpreter here, on the GPU in the ``gpu`` tests)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from vision.ops.relpos_attention import decomposed_rel_pos, get_rel_pos, relpos_attention, triton_available


def _inputs(b: int, heads: int, h: int, w: int, c: int, dtype=torch.float32, device="cpu"):
    qkv = torch.randn(b, h * w, 3, heads, c, dtype=dtype, device=device).permute(2, 0, 3, 1, 4)  # as in the model
    q, k, v = qkv.unbind(0)
    rph = torch.randn(2 * h - 1, c, dtype=dtype, device=device)
    rpw = torch.randn(2 * w - 1, c, dtype=dtype, device=device)
    return q, k, v, rph, rpw


def _reference(q, k, v, rph, rpw, hw):
    """The segment-anything computation, verbatim through its own helper."""
    from segment_anything.modeling.image_encoder import add_decomposed_rel_pos

    b, heads, n, c = q.shape
    q2, k2, v2 = (t.reshape(b * heads, n, c) for t in (q, k, v))
    attn = (q2 * c**-0.5) @ k2.transpose(-2, -1)
    attn = add_decomposed_rel_pos(attn, q2, rph, rpw, hw, hw).softmax(-1)
    return (attn @ v2).view(b, heads, n, c).transpose(1, 2)


@pytest.mark.parametrize("hw", [(8, 8), (5, 14), (14, 14)])
@pytest.mark.parametrize("impl", ["math", "sdpa", "triton"])  # "triton" falls back to SDPA on the CPU
def test_matches_reference(hw: tuple[int, int], impl: str) -> None:
    q, k, v, rph, rpw = _inputs(2, 3, *hw, 16)
    out = relpos_attention(q, k, v, rph, rpw, hw, impl=impl)
    assert out.shape == (2, hw[0] * hw[1], 3, 16)
    torch.testing.assert_close(out, _reference(q, k, v, rph, rpw, hw), atol=2e-6, rtol=1e-5)  # fp32: measured 6e-7


def test_get_rel_pos_matches_reference_with_interpolation() -> None:
    from segment_anything.modeling.image_encoder import get_rel_pos as ref_get_rel_pos

    table = torch.randn(27, 8)  # trained for 14 x 14, used at 16 x 16 and 8 x 8 (interpolated)
    for q_size, k_size in [(14, 14), (16, 16), (8, 8), (8, 16)]:
        torch.testing.assert_close(get_rel_pos(q_size, k_size, table), ref_get_rel_pos(q_size, k_size, table))


def test_decomposed_tables_shapes() -> None:
    q, _, _, rph, rpw = _inputs(1, 2, 4, 6, 8)
    rel_h, rel_w = decomposed_rel_pos(q, rph, rpw, (4, 6))
    assert rel_h.shape == (1, 2, 24, 4) and rel_w.shape == (1, 2, 24, 6)


def test_unknown_impl_raises() -> None:
    q, k, v, rph, rpw = _inputs(1, 1, 2, 2, 4)
    with pytest.raises(ValueError, match="unknown attention impl"):
        relpos_attention(q, k, v, rph, rpw, (2, 2), impl="flash")  # type: ignore[arg-type]


def test_triton_kernel_in_interpreter() -> None:
    """The fused kernel's indexing and online softmax, run by Triton's interpreter on CPU tensors. Covers the
    one-row key blocks (W = 16), the fixed column tile (W = 8) and the general gather (W = 14, windows)."""
    pytest.importorskip("triton")
    code = textwrap.dedent("""
        import torch
        from vision.ops._relpos_triton import _launch
        from vision.ops.relpos_attention import decomposed_rel_pos, relpos_attention
        torch.manual_seed(0)
        for b, heads, h, w, c in [(1, 2, 16, 16, 16), (2, 1, 8, 8, 24), (1, 2, 5, 14, 16)]:
            qkv = torch.randn(b, h * w, 3, heads, c).permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0)
            rph, rpw = torch.randn(2 * h - 1, c), torch.randn(2 * w - 1, c)
            ref = relpos_attention(q, k, v, rph, rpw, (h, w), impl="math")
            rel_h, rel_w = decomposed_rel_pos(q, rph, rpw, (h, w))
            err = (_launch(q, k, v, rel_h, rel_w, c ** -0.5) - ref).abs().max().item()
            assert err < 1e-5, (h, w, err)  # fp32 in the interpreter: measured 2.5e-6
        print("ok")
    """)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


@pytest.mark.gpu
@pytest.mark.skipif(not triton_available(), reason="needs CUDA and Triton")
@pytest.mark.parametrize("shape", [(2, 12, 64, 64, 64), (1, 16, 64, 64, 80), (4, 2, 16, 16, 64), (8, 4, 14, 14, 64)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_triton_kernel_on_gpu(shape: tuple[int, ...], dtype: torch.dtype) -> None:
    """Global ViT-B (head 64) and ViT-H (head 80, padded to 128) shapes, a small grid and a 14 x 14 window,
    against fp32 math attention on the same (low-precision) inputs."""
    b, heads, h, w, c = shape
    q, k, v, rph, rpw = _inputs(b, heads, h, w, c, dtype=dtype, device="cuda")
    out = relpos_attention(q, k, v, rph, rpw, (h, w), impl="triton")
    ref = relpos_attention(*(t.float() for t in (q, k, v, rph, rpw)), (h, w), impl="math")
    err = ((out.float() - ref).norm() / ref.norm()).item()
    print(f"triton {shape} {dtype}: relative error {err:.2e}")
    assert torch.isfinite(out).all()
    assert err < 2e-2  # bf16 operands: expected 1e-3..1e-2 (fp32 accumulation)


def test_triton_is_imported_only_when_its_attention_is_chosen() -> None:
    """The registry imports every model module (SAM's included) in every OCR process: none of them imports
    Triton; choosing the ``triton`` attention loads the fused kernel before any block is compiled."""
    pytest.importorskip("triton")
    code = textwrap.dedent("""
        import sys
        import torch
        from vision.models._registry import list_models
        list_models()
        print("triton" in sys.modules)
        from vision.fast.sam import set_attention_impl
        from vision.ops import relpos_attention
        set_attention_impl(torch.nn.Linear(1, 1), "triton")  # no encoder blocks to set; the kernel is loaded
        print("triton" in sys.modules, len(relpos_attention._FLASH))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True", "1"]
