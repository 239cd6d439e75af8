"""ONNX export and an onnxruntime runner that predictors can call like a model.

``export_onnx`` uses the TorchScript-based exporter (``dynamo=False``), which handles ``nn.LSTM`` and
marks batch and width dynamic; :class:`OnnxRunner` takes and returns torch tensors so that it drops into a
predictor in place of the ``nn.Module``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

__all__ = ["OnnxRunner", "export_onnx"]


def export_onnx(model: nn.Module, path: str | Path, example: torch.Tensor, *,
                dynamic_axes: Mapping[str, Mapping[int, str]] | None = None, input_name: str = "images",
                output_name: str = "logits", opset: int = 17) -> Path:
    """Export ``model`` (eval, fp32) traced on ``example`` to ``path``; returns the path.

    Default dynamic axes: batch and width of ``[N, 3, H, W]`` images, batch and time of ``[N, T, C]`` outputs.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    axes = dict(dynamic_axes) if dynamic_axes is not None else {input_name: {0: "batch", 3: "width"},
                                                                 output_name: {0: "batch", 1: "time"}}
    with warnings.catch_warnings():  # the TorchScript exporter warns about its deprecation and LSTM batch sizes
        warnings.simplefilter("ignore")
        torch.onnx.export(model.eval(), (example,), str(path), input_names=[input_name],
                          output_names=[output_name], dynamic_axes=axes, opset_version=opset, dynamo=False)
    return path


class OnnxRunner:
    """``runner(tensor) -> tensor`` over an onnxruntime session (CPU unless ``providers`` say otherwise)."""

    def __init__(self, path: str | Path, *, providers: Sequence[str] | None = None, threads: int | None = None) -> None:
        import onnxruntime as ort  # lazy: optional dependency (the "fast" extra)

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(path), options, providers=list(providers or ["CPUExecutionProvider"]))
        self.input_name = self.session.get_inputs()[0].name

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        out = self.session.run(None, {self.input_name: np.ascontiguousarray(x.detach().float().cpu().numpy())})[0]
        return torch.from_numpy(out)
