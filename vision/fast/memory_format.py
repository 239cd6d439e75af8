"""Channels-last (NHWC) memory format for the convolutional models on CUDA.

Why: our backbones are MobileNetV3s, full of depthwise convolutions. On CUDA, PyTorch hands an NCHW depthwise
convolution in bfloat16 (and float32) to its own generic kernel (``conv_depthwise2d``), which was a quarter of
the GPU time of a page in ``benchmarks/gpu_profile.py``; with channels-last weights or inputs it goes to
cuDNN's NHWC kernels, which tensor cores also prefer for the dense convolutions. The change is a layout, not
a computation: outputs match the NCHW model up to the kernels' float rounding (tested on the CPU).

Why not by default: cuDNN builds its NHWC kernels for each new input shape, and that first call costs 1-6 s
(a detector batch or a recognizer width bucket; ``benchmarks/model_shapes.py`` on an H200: 2.3-6.0 s NHWC
against 0.06-0.6 s NCHW, with steady calls within 20% of each other). Real pages bring a new shape every few
calls (5 page shapes x 3 row counts for the detector, about 25 width buckets x 8 row counts for the
recognizer), so predictors keep NCHW unless told (``channels_last=True``): worth it only where the shapes
are few and fixed (``benchmarks/gpu_throughput.py``'s identical pages).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["to_channels_last", "wants_channels_last"]


def to_channels_last(model: nn.Module) -> nn.Module:
    """Store every 4-D parameter and buffer of ``model`` channels-last, in place; returns it. Convolutions then
    pick NHWC kernels (an NCHW input is converted once, by the first convolution)."""
    return model.to(memory_format=torch.channels_last)


def wants_channels_last(option: bool | None, device: torch.device) -> bool:
    """Resolve a predictor's ``channels_last`` option: ``None`` (the default) means NCHW on every device (see
    the module doc); ``device`` is kept for callers that resolve per device."""
    del device
    return bool(option)
