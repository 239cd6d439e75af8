"""One device, dtype and backend policy for every predictor.

- :func:`pick_device`: CUDA when available unless told otherwise.
- :func:`wants_onnx`: the backend. onnxruntime runs the float32 export by default on the CPU (faster than
  eager PyTorch there, ``benchmarks/recognition.py`` and ``benchmarks/detection.py``); PyTorch everywhere
  else, where bf16, ``torch.compile`` and channels-last apply.
- :func:`onnx_runner`: the cached export in an onnxruntime session, or ``None`` to fall back to eager.
- :func:`place`: a PyTorch model moved to its device and dtype, compiled on request, else replayed from CUDA
  graphs on CUDA.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from vision.fast.memory_format import to_channels_last, wants_channels_last

__all__ = ["onnx_runner", "pick_device", "place", "registered_identity", "wants_onnx"]


def pick_device(device: str | torch.device | None) -> torch.device:
    """``device`` as a :class:`torch.device`; ``None`` means CUDA when available, else the CPU."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def wants_onnx(onnx: bool | None, device: torch.device, dtype: torch.dtype, *, compile: bool = False) -> bool:
    """Whether to run the onnxruntime export: ``onnx`` when given, else on the CPU in float32 uncompiled.

    Raises:
        ValueError: ``onnx=True`` with another dtype or ``compile`` (the export is float32 and eager).
    """
    if onnx and (dtype != torch.float32 or compile):
        raise ValueError(f"onnx=True runs the float32 export: it excludes compile and dtype={dtype}")
    if onnx is not None:
        return onnx
    return device.type == "cpu" and dtype == torch.float32 and not compile


def registered_identity(arch: str, weights: str | Path | None, *extra: object) -> str | None:
    """The :func:`vision.fast.onnx.weights_key` of the registered ``arch`` with ``weights`` (``"default"``
    or a file), or ``None`` without a weight file (random init, a missing file): the model is then built
    and keyed by its tensors."""
    from vision.fast.onnx import weights_key
    from vision.models._registry import weights_sha256

    sha = weights_sha256(arch, weights)
    return None if sha is None else weights_key(arch, sha, *extra)


def onnx_runner(model: nn.Module | Callable[[], nn.Module], example: torch.Tensor, *, name: str,
                device: torch.device, required: bool, threads: int,
                dynamic_axes: Mapping[str, Mapping[int, str]] | None = None, output_name: str = "logits",
                identity: str | None = None) -> Any:
    """The cached ONNX export of ``model`` (:func:`vision.fast.onnx.cached_runner`) in an onnxruntime session.

    ``model`` may be a function building it and ``identity`` a :func:`vision.fast.onnx.weights_key`: a cache
    hit then builds nothing. When not ``required`` (the CPU default), a missing onnxruntime or a failed
    export gives ``None`` (with a warning for the latter) and the caller runs eager PyTorch.
    """
    from vision.fast.onnx import cached_runner, onnx_available

    if not required and not onnx_available():
        return None
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device.type == "cuda" else None
    build_failed: list[Exception] = []

    def build() -> nn.Module:
        try:
            return model if isinstance(model, nn.Module) else model()
        except Exception as exc:  # the model's own error (bad weights...), not the exporter's: raised as is
            build_failed.append(exc)
            raise

    try:
        return cached_runner(build, example, name=name, dynamic_axes=dynamic_axes, output_name=output_name,
                             threads=threads, providers=providers, identity=identity)
    except Exception as exc:  # the exporter raises many types; the eager model is always a valid fallback
        if required or build_failed:
            raise
        warnings.warn(f"ONNX export of {name} failed ({exc}); running eager PyTorch", stacklevel=3)
        return None


def place(model: nn.Module, device: torch.device, dtype: torch.dtype, *, channels_last: bool | None = None,
          compile: bool = False, cuda_graphs: bool | None = None,
          **compile_options: Any) -> tuple[nn.Module, bool]:
    """``model`` on ``device`` in ``dtype``, channels-last where :func:`wants_channels_last` says,
    ``torch.compile``d when asked, else replayed from CUDA graphs on a CUDA device
    (:class:`vision.fast.cuda_graphs.CUDAGraphs`; ``cuda_graphs=False`` runs it eagerly, ``None`` means on
    where :func:`~vision.fast.cuda_graphs.graphs_available`). Returns the model and whether it is
    channels-last."""
    model = model.to(device)
    if dtype != torch.float32:
        from vision.fast.precision import to_dtype

        model = to_dtype(model, dtype)
    nhwc = wants_channels_last(channels_last, device)
    if nhwc:
        model = to_channels_last(model)
    if compile:
        from vision.fast.compile import compile_model

        model = compile_model(model, **compile_options)
    elif cuda_graphs is not False:
        from vision.fast.cuda_graphs import CUDAGraphs, graphs_available

        if graphs_available(device):
            model = CUDAGraphs(model)
        elif cuda_graphs:
            raise ValueError(f"cuda_graphs=True needs a CUDA device (and VISION_CUDA_GRAPHS unset or not 0), "
                             f"got {device}")
    return model, nhwc
