"""SAM's speed ladder as one typed option object, applied to a built model (never read from the environment).

Rungs, cumulative in :data:`LADDER` order (each has a parity test against fp32 eager, tolerance from measurement):
``fp32`` (reference math) -> ``bf16`` -> ``sdpa`` (fused attention, rel-pos as an additive mask) -> ``compile``
(each encoder block compiled, batches padded to fixed sizes) -> ``triton`` (global blocks through the fused
rel-pos kernel) -> ``nested`` (prompts of all images decoded as one jagged batch) -> ``int8`` / ``float8``
(dynamic quantization of the encoder linears, torchao) -> ``sparse24`` (2:4 encoder MLP weights, cuSPARSELt).
SDPA comes before compile because compiling the explicit ``N x N`` softmax is slow and gains little.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from vision.models.segmentation.sam.image_encoder import Block
from vision.models.segmentation.sam.sam import Sam
from vision.ops.relpos_attention import AttentionImpl, load_triton_kernel

__all__ = ["LADDER", "FastOptions", "StaticBatchEncoder", "apply_fast", "set_attention_impl"]


@dataclass(frozen=True)
class FastOptions:
    """Opt-in fast paths for SAM; the defaults are plain fp32 eager with SDPA attention.

    Attributes:
        dtype: ``"bfloat16"`` casts the whole model (positional encodings stay fp32 internally).
        attention: image-encoder attention: ``"math"`` (reference), ``"sdpa"``, or ``"triton"`` (fused rel-pos
            kernel for the global blocks on CUDA; windowed blocks and other devices use SDPA).
        compile: ``torch.compile`` each encoder block (``dynamic=False``); batches are padded to ``batch_buckets``.
        compile_mode: ``torch.compile`` mode (``None``, ``"max-autotune-no-cudagraphs"``, ...).
        compile_backend: ``"inductor"``; ``"aot_eager"`` traces without code generation (CPU tests).
        batch_buckets: the static batch sizes a compiled encoder runs at (ascending).
        nested_prompts: decode the prompts of all images of a batch in one jagged (NestedTensor) call.
        quantize: ``"int8"`` or ``"float8"`` dynamic quantization of the encoder linears (torchao).
        sparsity_24: prune the encoder MLP linears to 2:4 and run them on cuSPARSELt (CUDA, bf16).
    """

    dtype: Literal["float32", "bfloat16"] = "float32"
    attention: AttentionImpl = "sdpa"
    compile: bool = False
    compile_mode: str | None = None
    compile_backend: str = "inductor"
    batch_buckets: tuple[int, ...] = (1, 8, 32)
    nested_prompts: bool = False
    quantize: Literal["int8", "float8"] | None = None
    sparsity_24: bool = False

    def __post_init__(self) -> None:
        if self.dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype must be 'float32' or 'bfloat16', got {self.dtype!r}")
        if self.attention not in ("math", "sdpa", "triton"):
            raise ValueError(f"attention must be 'math', 'sdpa' or 'triton', got {self.attention!r}")
        if self.quantize not in (None, "int8", "float8"):
            raise ValueError(f"quantize must be None, 'int8' or 'float8', got {self.quantize!r}")
        if not self.batch_buckets or list(self.batch_buckets) != sorted(set(self.batch_buckets)) or self.batch_buckets[0] < 1:
            raise ValueError(f"batch_buckets must be ascending positive sizes, got {self.batch_buckets}")

    @property
    def torch_dtype(self) -> torch.dtype:
        return torch.bfloat16 if self.dtype == "bfloat16" else torch.float32

    def replace(self, **changes: object) -> FastOptions:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


def _ladder() -> dict[str, FastOptions]:
    fp32 = FastOptions(attention="math")
    bf16 = fp32.replace(dtype="bfloat16")
    sdpa = bf16.replace(attention="sdpa")
    compiled = sdpa.replace(compile=True)
    triton = compiled.replace(attention="triton")
    nested = triton.replace(nested_prompts=True)
    return {"fp32": fp32, "bf16": bf16, "sdpa": sdpa, "compile": compiled, "triton": triton, "nested": nested,
            "int8": nested.replace(quantize="int8"), "float8": nested.replace(quantize="float8"),
            "sparse24": nested.replace(sparsity_24=True)}


LADDER: dict[str, FastOptions] = _ladder()


def set_attention_impl(model: nn.Module, impl: AttentionImpl) -> None:
    """Choose the attention implementation of every encoder block (``"triton"`` only for global blocks; its
    kernel is loaded here, before any compiled block calls it)."""
    if impl == "triton":
        load_triton_kernel()
    for block in model.modules():
        if isinstance(block, Block):
            block.attn.impl = "sdpa" if impl == "triton" and block.window_size > 0 else impl


def _encoder_linear(module: nn.Module, fqn: str) -> bool:
    return isinstance(module, nn.Linear) and ".blocks." in f".{fqn}"


def _encoder_mlp(module: nn.Module, fqn: str) -> bool:
    return _encoder_linear(module, fqn) and ".mlp." in fqn


def _quantize_int8(model: nn.Module) -> None:
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_

    # set_inductor_config=False: no process-wide Inductor settings behind the caller's back
    quantize_(model, Int8DynamicActivationInt8WeightConfig(set_inductor_config=False), filter_fn=_encoder_linear)


def apply_fast(model: Sam, options: FastOptions) -> Sam:
    """Apply ``options`` to ``model`` in place (dtype, attention, quantization or sparsity, then compilation).

    Quantization and sparsity touch only the image-encoder block linears, where 99% of the FLOPs are.

    Raises:
        RuntimeError: a GPU-only rung (float8, 2:4) on a device that cannot run it.
    """
    model.to(options.torch_dtype)
    set_attention_impl(model.image_encoder, options.attention)
    encoder = model.image_encoder
    if options.quantize == "int8":
        _quantize_int8(encoder)
    elif options.quantize == "float8":
        from vision.fast.float8 import quantize_float8

        quantize_float8(encoder, filter_fn=_encoder_linear)
    if options.sparsity_24:
        from vision.fast.sparsity import sparsify_24

        sparsify_24(encoder, filter_fn=_encoder_mlp)
    if options.compile:
        for block in encoder.blocks:  # regional compilation: one graph per block kind, reused by every block
            block.compile(dynamic=False, mode=options.compile_mode, backend=options.compile_backend)
    return model


class StaticBatchEncoder(nn.Module):
    """Runs an image encoder on batches zero-padded up to fixed sizes, so a compiled encoder sees only
    ``len(buckets)`` shapes: a batch of 5 runs as 8 and larger batches run in chunks of the largest size."""

    def __init__(self, encoder: nn.Module, buckets: tuple[int, ...]) -> None:
        super().__init__()
        self.encoder = encoder
        self.buckets = tuple(buckets)

    def forward(self, images: Tensor) -> Tensor:
        """``(B, 3, S, S)`` -> ``(B, C, S/16, S/16)``."""
        outs = []
        for chunk in images.split(self.buckets[-1]):
            n = chunk.shape[0]
            size = next(s for s in self.buckets if s >= n)
            if size > n:
                chunk = torch.cat([chunk, chunk.new_zeros(size - n, *chunk.shape[1:])])
            outs.append(self.encoder(chunk)[:n])
        return outs[0] if len(outs) == 1 else torch.cat(outs)
