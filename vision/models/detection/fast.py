"""Opt-in fast paths for the detector's probability model (:class:`DBProbability`), applied after the build.

Each returns a callable ``float[N, 3, H, W] -> float[N, 1, H, W]`` that :class:`DetectionPredictor` accepts
in place of the eager model; ``tests/models/test_detection_fast.py`` checks each against fp32 eager by the
F1 between their word boxes on rendered pages.

- :func:`to_bf16`: bf16 weights and activations (GPU tensor cores; slow on CPUs without bf16 units).
- :func:`compile_model`: ``torch.compile`` with static shapes (the predictor pads to a few fixed shapes).
- :func:`to_onnx` / :class:`OnnxModel`: ONNX export run by onnxruntime.
- :func:`quantize_int8`: int8 dynamic quantization of the exported graph's convolutions (onnxruntime's
  ``quantize_dynamic``, per-channel weights, activations quantized on the fly). ``torch.ao``'s dynamic
  quantization covers only ``Linear``/``LSTM`` layers, of which DBNet has none.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

__all__ = ["to_bf16", "compile_model", "to_onnx", "OnnxModel", "quantize_int8"]


def to_bf16(model: nn.Module) -> nn.Module:
    """The model with bf16 parameters (feed it bf16 inputs: ``DetectionPredictor(dtype=torch.bfloat16)``)."""
    return model.to(torch.bfloat16).eval()


def compile_model(model: nn.Module, *, mode: str | None = None, backend: str = "inductor") -> nn.Module:
    """``torch.compile(model, dynamic=False)``: one graph per input shape and batch size.

    ``backend="aot_eager"`` captures the same graph without code generation (what CPU tests use: inductor's
    C++ build of this model takes over a minute on 2 cores).
    """
    return torch.compile(model.eval(), dynamic=False, mode=mode, backend=backend)


def to_onnx(model: nn.Module, path: str | Path, *, example_shape: tuple[int, int] = (256, 256)) -> Path:
    """Export ``model`` (fp32, CPU) to ``path`` through ``torch.export`` with dynamic batch, height and width
    (multiples of 32, as the predictor's shapes are)."""
    from torch.export import Dim

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    model = model.float().cpu().eval()
    example = torch.zeros(1, 3, *example_shape)
    shapes = {"images": {0: Dim("n", max=1024), 2: Dim.DYNAMIC, 3: Dim.DYNAMIC}}
    torch.onnx.export(
        model,
        (example,),
        str(path),
        input_names=["images"],
        output_names=["prob"],
        dynamo=True,
        dynamic_shapes=shapes,
        optimize=True,
        verbose=False,
        external_data=False,
    )
    return path


class OnnxModel:
    """An onnxruntime session as a ``Tensor -> Tensor`` callable (CPU execution provider by default)."""

    def __init__(
        self,
        path: str | Path,
        *,
        threads: int | None = None,
        providers: tuple[str, ...] = ("CPUExecutionProvider",),
    ) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(path), options, providers=list(providers))

    def __call__(self, images: Tensor) -> Tensor:
        x = images.detach().float().cpu().numpy()
        (prob,) = self.session.run(["prob"], {"images": np.ascontiguousarray(x)})
        return torch.from_numpy(prob)


def quantize_int8(onnx_path: str | Path, out_path: str | Path) -> Path:
    """Int8 dynamic quantization of the convolutions of an exported model (weights per channel)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_path = Path(out_path)
    quantize_dynamic(
        str(onnx_path),
        str(out_path),
        weight_type=QuantType.QUInt8,
        per_channel=True,
        op_types_to_quantize=["Conv"],
    )
    return out_path
