"""2:4 semi-structured sparsity of ``nn.Linear`` weights.

:func:`prune_24` keeps the two largest-magnitude weights of every group of four consecutive inputs (a pure
function, usable anywhere); :func:`sparsify_24` prunes the selected linears and, on CUDA, stores the weights as
``torch.sparse`` semi-structured tensors on the cuSPARSELt backend (the one that runs on H100s), whose matmuls
skip the zeros. Pruning changes the function: its accuracy cost on SAM is measured in ``docs/benchmarks.md``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

__all__ = ["is_24_sparse", "prune_24", "sparsify_24"]

LinearFilter = Callable[[nn.Module, str], bool]


def prune_24(weight: Tensor) -> Tensor:
    """``(out, in)`` weight with the 2 smallest-magnitude values of each group of 4 inputs set to zero.

    Raises:
        ValueError: when ``in`` is not a multiple of 4.
    """
    out_features, in_features = weight.shape
    if in_features % 4:
        raise ValueError(f"2:4 sparsity needs the input width to be a multiple of 4, got {in_features}")
    groups = weight.reshape(out_features, in_features // 4, 4)
    keep = groups.abs().float().topk(2, dim=-1).indices  # ties broken by position
    mask = torch.zeros_like(groups, dtype=torch.bool).scatter_(-1, keep, True)
    return (groups * mask).reshape(out_features, in_features)


def is_24_sparse(weight: Tensor) -> bool:
    """Whether every group of 4 consecutive inputs of a dense ``(out, in)`` weight has at most 2 non-zeros."""
    return bool(((weight.reshape(weight.shape[0], -1, 4) != 0).sum(-1) <= 2).all())


def sparsify_24(model: nn.Module, *, filter_fn: LinearFilter | None = None, compress: bool = True) -> nn.Module:
    """Prune the selected linears of ``model`` to 2:4 (in place) and, when ``compress``, store them as
    cuSPARSELt semi-structured tensors.

    Args:
        model: fp16/bf16 model on CUDA when ``compress`` (cuSPARSELt has no fp32 or CPU kernels).
        filter_fn: ``(module, fully_qualified_name) -> bool`` picking linears (default: all).
        compress: ``False`` only prunes (dense zeros): the accuracy of 2:4 without its kernels, on any device.

    Raises:
        RuntimeError: ``compress`` on a device or dtype cuSPARSELt cannot run.
    """
    from torch.sparse import SparseSemiStructuredTensorCUSPARSELT

    for name, module in model.named_modules():
        if not isinstance(module, nn.Linear) or (filter_fn is not None and not filter_fn(module, name)):
            continue
        weight = prune_24(module.weight.detach())
        if compress:
            if weight.device.type != "cuda" or weight.dtype not in (torch.float16, torch.bfloat16):
                raise RuntimeError(f"2:4 kernels need fp16/bf16 weights on CUDA, got {weight.dtype} on {weight.device}")
            weight = SparseSemiStructuredTensorCUSPARSELT.from_dense(weight)
        module.weight = nn.Parameter(weight, requires_grad=False)
    return model
