"""Channels-last models (``vision.fast.memory_format``, the predictors' default on CUDA) against the NCHW fp32 eager
path, on fresh random inputs: a layout change, so outputs agree to float rounding (atol 1e-4 on probabilities
and log-probabilities)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vision.fast.memory_format import to_channels_last, wants_channels_last
from vision.models import get_model
from vision.models.detection.dbnet import DBProbability
from vision.predictors.detection.predictor import detection_predictor


@pytest.mark.parametrize("arch", ["crnn_mobilenet_small", "crnn_transformer_small"])
def test_recognizers_match_nchw(arch: str) -> None:
    torch.manual_seed(0)
    model = get_model(arch, weights=None).eval()
    x = torch.rand(3, 3, 32, 96)
    with torch.inference_mode():
        ref = model(x).log_softmax(-1)
        nhwc = to_channels_last(model)
        assert nhwc.backbone.features[0][0].weight.is_contiguous(memory_format=torch.channels_last)
        got = nhwc(x).log_softmax(-1)
    torch.testing.assert_close(got, ref, rtol=0, atol=1e-4)


def test_detector_matches_nchw() -> None:
    torch.manual_seed(0)
    prob = DBProbability(get_model("db_mobilenet_v3_large", weights=None)).eval()
    x = torch.rand(2, 3, 128, 96)
    with torch.inference_mode():
        ref = prob(x)
        got = to_channels_last(prob)(x.contiguous(memory_format=torch.channels_last))
    torch.testing.assert_close(got, ref, rtol=0, atol=1e-4)


def test_predictor_option_and_default() -> None:
    """``None`` means NCHW everywhere (per-shape cost on CUDA); asked for, the detection predictor feeds NHWC
    inputs, with the same boxes."""
    assert not wants_channels_last(None, torch.device("cuda")) and not wants_channels_last(None, torch.device("cpu"))
    assert wants_channels_last(True, torch.device("cpu")) and not wants_channels_last(False, torch.device("cuda"))
    rng = np.random.default_rng(0)
    page = np.full((200, 160, 3), 255, np.uint8)
    for y in range(20, 180, 24):  # dark bars that a random detector still maps to some regions
        page[y:y + 10, 20:int(rng.integers(60, 150))] = 0
    torch.manual_seed(0)
    plain = detection_predictor(weights=None, device="cpu", onnx=False)
    torch.manual_seed(0)
    nhwc = detection_predictor(weights=None, device="cpu", onnx=False, channels_last=True)
    assert not plain.channels_last and nhwc.channels_last
    as_tensor = torch.from_numpy(page[None])  # the device path of preprocess (a tensor, as from resize="device")
    assert nhwc.preprocess(as_tensor).is_contiguous(memory_format=torch.channels_last)
    assert plain.preprocess(as_tensor).is_contiguous()
    torch.testing.assert_close(nhwc.preprocess(as_tensor), plain.preprocess(page[None]), rtol=0, atol=1e-5)
    a, b = plain.probabilities(page[None]), nhwc.probabilities(page[None])
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-4)
