"""Channels-last (NHWC) memory format for the convolutional models on CUDA.

Why: our backbones are MobileNetV3s, full of depthwise convolutions. On CUDA, PyTorch hands an NCHW depthwise
convolution in bfloat16 (and float32) to its own generic kernel (``conv_depthwise2d``), which was a quarter of
the GPU time of a page in ``benchmarks/gpu_profile.py``; with channels-last weights or inputs it goes to
cuDNN's NHWC kernels, which tensor cores also prefer for the dense convolutions. The change is a layout, not
a computation: outputs match the NCHW model up to the kernels' float rounding (tested on the CPU). Predictors
apply it on CUDA by default (``channels_last=None``); the CPU keeps NCHW (onnxruntime runs there anyway).
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
    """Resolve a predictor's ``channels_last`` option: ``None`` means on CUDA only."""
    return device.type == "cuda" if option is None else bool(option)
