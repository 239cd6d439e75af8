"""``torch.compile`` as an opt-in transform (no global inductor settings are touched).

Predictors that feed static widths (the recognition predictor's width buckets with ``pad_batches``, whose
batch dimension is marked dynamic) get one graph per bucket; :func:`compile_model` leaves ``dynamic`` to
torch's default so that, after a shape changes once, dynamo generalises instead of recompiling for every
new batch width.
"""

from __future__ import annotations

import sys
from typing import Any

import torch
from torch import nn

__all__ = ["compile_model", "mark_dynamic_rows"]


def compile_model(model: nn.Module, *, mode: str | None = None, dynamic: bool | None = None,
                  fullgraph: bool = False, **options: Any) -> nn.Module:
    """Return ``torch.compile(model, ...)`` (an ``OptimizedModule`` sharing ``model``'s parameters).

    Args:
        model: a built model in eval mode.
        mode: ``None`` (default), ``"reduce-overhead"`` (CUDA graphs: best for small batches on GPU) or
            ``"max-autotune"``.
        dynamic: forwarded to ``torch.compile`` (``None``: automatic dynamic shapes after a recompile).
        fullgraph: require a single graph (raise on graph breaks).
        options: further ``torch.compile`` keyword arguments (``backend=...``).
    """
    return torch.compile(model, mode=mode, dynamic=dynamic, fullgraph=fullgraph, **options)


def mark_dynamic_rows(x: torch.Tensor) -> torch.Tensor:
    """Mark ``x``'s batch dimension dynamic for compiled models (``torch._dynamo.maybe_mark_dynamic``).

    Only a compiled model reads the mark, and compiling imports ``torch._dynamo``; so when this process has not
    imported it, nothing is compiled and the mark is skipped rather than importing ``torch._dynamo`` (and
    Triton) for it: about 1.5 s of an eager GPU process's first call (``docs/benchmarks.md``). Returns ``x``.
    """
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None:
        dynamo.maybe_mark_dynamic(x, 0)
    return x
