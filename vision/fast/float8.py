"""Float8 dynamic quantization of ``nn.Linear`` layers through torchao (Hopper / Ada GPUs only).

Activations are scaled per token and weights per output channel (torchao's ``PerRow``), then multiplied with
``torch._scaled_mm`` in e4m3. On an H100 this doubles the tensor-core rate of the bf16 matmuls it replaces.

Two settings differ from torchao's defaults. An all-zero activation row (SAM's zero-padded attention windows have
them) gets scale ``0`` and turns into NaN unless the row maximum is floored (``activation_value_lb``; seen on an
H200, reproduced on the CPU). ``set_inductor_config=False`` keeps torchao from switching on process-wide
Inductor options (coordinate-descent tuning, with which the float8 rung of ``benchmarks/sam.py`` does not
finish compiling within ~5 minutes on an H200).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

__all__ = ["float8_supported", "quantize_float8"]

LinearFilter = Callable[[nn.Module, str], bool]


def float8_supported(device: torch.device | str | None = None) -> bool:
    """Whether ``device`` (default: the current CUDA device) has float8 tensor cores (compute capability >= 8.9)."""
    if not torch.cuda.is_available():
        return False
    return torch.cuda.get_device_capability(device) >= (8, 9)


def _linears_only(filter_fn: LinearFilter | None) -> LinearFilter:
    def keep(module: nn.Module, fqn: str) -> bool:
        return isinstance(module, nn.Linear) and (filter_fn is None or filter_fn(module, fqn))

    return keep


_ACT_FLOOR = 1e-12  # floor of a row's max |activation|: zero rows quantize to zeros instead of 0 / 0


def float8_config() -> object:
    """torchao's dynamic float8 config as used here: per-row scales, floored activation scales, no global
    Inductor settings."""
    from torchao.quantization import Float8DynamicActivationFloat8WeightConfig, PerRow

    return Float8DynamicActivationFloat8WeightConfig(granularity=PerRow(), activation_value_lb=_ACT_FLOOR,
                                                     set_inductor_config=False)


def _check_device(model: nn.Module) -> None:
    params = list(model.parameters())
    device = params[0].device if params else torch.device("cpu")
    if device.type != "cuda" or not float8_supported(device):
        raise RuntimeError(f"float8 quantization needs a CUDA GPU of compute capability >= 8.9, got {device}")


def quantize_float8(model: nn.Module, *, filter_fn: LinearFilter | None = None) -> nn.Module:
    """Swap the weights of the selected linears of ``model`` (in place) for float8 per-row quantized ones.

    Args:
        model: a bf16 model on a CUDA device with float8 support.
        filter_fn: ``(module, fully_qualified_name) -> bool`` picking linears (default: all of them); widths
            must be multiples of 16 for ``_scaled_mm``.

    Raises:
        RuntimeError: when the device cannot run float8 matmuls or torchao is missing.
    """
    _check_device(model)
    try:
        from torchao.quantization import quantize_
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("float8 quantization needs torchao (pip install 'vision-ocr[fast]')") from exc
    quantize_(model, float8_config(), filter_fn=_linears_only(filter_fn))
    return model
