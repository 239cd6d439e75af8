"""Reduced-precision inference: cast a built model to bfloat16 (or float16) once, after loading.

Opt-in: predictors call :func:`to_dtype` only when asked for ``dtype=torch.bfloat16``; inputs must then be
cast to the same dtype (the recognition predictor does it). BatchNorm, LSTM and attention all run in bf16 on
CPU and CUDA in torch >= 2.5.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["to_bf16", "to_dtype"]


def to_dtype(model: nn.Module, dtype: torch.dtype) -> nn.Module:
    """Cast parameters and floating buffers of ``model`` to ``dtype`` in place (eval mode); returns it."""
    if not dtype.is_floating_point:
        raise ValueError(f"to_dtype expects a floating dtype, got {dtype}")
    return model.to(dtype=dtype).eval()


def to_bf16(model: nn.Module) -> nn.Module:
    """Shortcut for ``to_dtype(model, torch.bfloat16)``."""
    return to_dtype(model, torch.bfloat16)
