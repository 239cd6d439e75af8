"""Int8 dynamic quantization (weights int8, activations quantized on the fly), opt-in after the build.

* CPU: ``torch.ao.quantization.quantize_dynamic`` on ``nn.Linear`` and ``nn.LSTM`` (the recurrent layers
  are where a CRNN spends its CPU time, and only this path quantizes them); when that deprecated API is
  gone, torchao's ``Int8DynamicActivationInt8WeightConfig`` on the linear layers instead.
* CUDA: torchao ``Int8DynamicActivationInt8WeightConfig`` on the linear layers (int8 tensor-core matmuls).

Convolutions stay in floating point on both paths: they are small depthwise/pointwise layers here.

:func:`quantize_onnx_int8` quantizes an exported ONNX graph instead (onnxruntime's ``quantize_dynamic``):
the detector has no ``Linear``/``LSTM`` layers, so its int8 path quantizes the graph's convolutions.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn

__all__ = ["quantize_int8", "quantize_onnx_int8"]


def quantize_int8(model: nn.Module, *, device: str | torch.device | None = None, inplace: bool = False) -> nn.Module:
    """Return an int8 dynamically quantized copy of ``model`` (eval mode) for ``device`` (default: the model's).

    Raises:
        RuntimeError: when no int8 backend is available for that device (torchao missing on CUDA).
    """
    target = torch.device(device) if device is not None else next(model.parameters()).device
    model = (model if inplace else copy.deepcopy(model)).eval()
    if target.type == "cpu":
        try:
            from torch.ao.quantization import quantize_dynamic
        except ImportError:
            quantize_dynamic = None
        if quantize_dynamic is not None:
            with warnings.catch_warnings():  # deprecation notice pointing to torchao, which lacks int8 LSTM
                warnings.simplefilter("ignore")
                return quantize_dynamic(model.cpu(), {nn.Linear, nn.LSTM}, dtype=torch.qint8, inplace=True)
    try:
        from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_
    except ImportError as exc:
        raise RuntimeError(f"int8 quantization on {target.type} needs torchao (pip install torchao)") from exc
    model = model.to(target)
    quantize_(model, Int8DynamicActivationInt8WeightConfig())
    return model


def quantize_onnx_int8(onnx_path: str | Path, out_path: str | Path, *,
                       op_types: Sequence[str] = ("Conv",)) -> Path:
    """Int8 dynamic quantization of the ``op_types`` layers of an exported ONNX graph (weights per channel,
    activations quantized on the fly by onnxruntime); returns ``out_path``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_path = Path(out_path)
    quantize_dynamic(str(onnx_path), str(out_path), weight_type=QuantType.QUInt8, per_channel=True,
                     op_types_to_quantize=list(op_types))
    return out_path
