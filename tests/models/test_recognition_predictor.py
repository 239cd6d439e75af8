"""recognition_predictor: input forms, order, buckets, long-crop splitting, tall crops, errors, reading."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from _reco_crops import render_word, word_set
from PIL import Image

import vision
from vision.predictors.recognition.predictor import RecognitionPredictor, recognition_predictor
from vision.predictors.recognition.preprocess import InvalidCrop, bucket_width, pad_color, resize_to_height


@pytest.fixture(scope="module")
def predictor() -> RecognitionPredictor:
    return recognition_predictor(device="cpu", batch_size=32)


def test_public_entry_point_and_defaults(predictor: RecognitionPredictor) -> None:
    assert vision.recognition_predictor is recognition_predictor
    assert predictor.arch == "crnn_mobilenet_small" and predictor.device.type == "cpu"


def test_reads_rendered_words(predictor: RecognitionPredictor) -> None:
    crops, texts = word_set(30)
    results = predictor(crops)
    assert len(results) == len(texts)
    correct = sum(text == truth for (text, _), truth in zip(results, texts))
    assert correct / len(texts) >= 0.9, [(t, r) for (r, _), t in zip(results, texts) if r != t]
    assert all(0.0 <= conf <= 1.0 for _, conf in results)


def test_input_forms_give_the_same_reading(predictor: RecognitionPredictor) -> None:
    arr = render_word("Invoice", size=24)
    forms = [arr, Image.fromarray(arr), torch.from_numpy(arr).permute(2, 0, 1), torch.from_numpy(arr),
             arr.astype(np.float32) / 255, Image.fromarray(arr).convert("L"), np.asarray(Image.fromarray(arr).convert("L"))]
    texts = [t for t, _ in predictor(forms)]
    assert texts == ["Invoice"] * len(forms)


def test_order_is_kept_across_buckets(predictor: RecognitionPredictor) -> None:
    words = ["a", "TOTAL", "Tobacco", "12/31/1995", "OK", "RESEARCH"]
    crops = [render_word(w, size=20) for w in words]
    widths = {bucket_width(resize_to_height(c).shape[1]) for c in crops}
    assert len(widths) >= 3  # really several buckets
    assert [t for t, _ in predictor(crops)] == words
    assert predictor([]) == []


def test_long_crops_are_split_and_merged(predictor: RecognitionPredictor) -> None:
    line = "Tobacco RESEARCH report 1984"
    crop = render_word(line, size=22)
    split = recognition_predictor(device="cpu", max_width=128, overlap=48)
    assert resize_to_height(crop).shape[1] > 2 * 128  # at least three chunks
    assert split([crop])[0][0] == line
    assert predictor([crop])[0][0] == line  # default chunking (the training width, 192 px)


def test_tall_crops_are_read_rotated(predictor: RecognitionPredictor) -> None:
    crop = np.ascontiguousarray(np.rot90(render_word("RESEARCH", size=22), 1))  # vertical text
    assert predictor([crop])[0][0] == "RESEARCH"


def test_bad_input_raises(predictor: RecognitionPredictor) -> None:
    with pytest.raises(InvalidCrop):
        predictor([np.zeros((0, 10, 3), np.uint8)])
    with pytest.raises(InvalidCrop):
        predictor(["not an image"])
    with pytest.raises(InvalidCrop):
        predictor([np.zeros((4, 4, 5), np.uint8)])
    with pytest.raises(ValueError):
        predictor(np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(ValueError):
        recognition_predictor(device="cpu", max_width=100)


def test_random_weights_build_without_files() -> None:
    p = recognition_predictor("crnn_transformer_small", weights=None, device="cpu")
    text, conf = p([render_word("x")])[0]
    assert isinstance(text, str) and 0.0 <= conf <= 1.0


def test_pad_color_is_the_median_of_the_border() -> None:
    """pad_color's sort-based median equals np.median's (training and inference pad alike)."""
    rng = np.random.default_rng(0)
    for h, w in [(1, 1), (1, 7), (2, 2), (5, 3), (32, 90), (33, 17)]:
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        edge = np.concatenate([img[0], img[-1], img[:, 0], img[:, -1]])
        np.testing.assert_array_equal(pad_color(img), np.median(edge, axis=0).astype(np.uint8))


def test_lanes_read_like_one_lane() -> None:
    """``lanes=2`` (the CPU default with two threads): batches run two at a time through the same session,
    with the same readings, in input order, as one at a time (small batches: many in flight, long crops
    split across batches)."""
    one = recognition_predictor(device="cpu", batch_size=8, lanes=1)
    assert one.lanes == 1
    two = RecognitionPredictor(one.model, arch=one.arch, device=one.device, dtype=one.dtype, batch_size=8,
                               lexicon=one.lexicon, lanes=2)
    crops, _ = word_set(60)
    crops = crops + [render_word("Statement of account number 1234567 for March", size=22)]
    assert two(crops) == one(crops)
    assert two([]) == []
    with pytest.raises(ValueError, match="lanes"):
        RecognitionPredictor(one.model, arch=one.arch, device=one.device, dtype=one.dtype, lanes=0)


def test_building_the_recognizer_leaves_torchvision_unimported():
    """The registry imports every model module; torchvision (which loads ``torch._dynamo``, ~1.5 s of start-up)
    is imported only where a model or op uses it, so a recognition-only process never pays for it."""
    code = (
        "import sys, vision; vision.recognition_predictor(device='cpu', onnx=False); "
        "assert 'torchvision' not in sys.modules, 'torchvision imported'"
    )
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr


def test_a_cached_export_builds_no_model(tmp_path, monkeypatch):
    """The CPU default keys its ONNX export by the shipped weight file, so a cached export is used without
    building the network; the readings are the same."""
    from vision.fast.onnx import OnnxRunner
    from vision.predictors.recognition import predictor as module

    monkeypatch.setenv("VISION_CACHE", str(tmp_path))
    crops, _ = word_set(20)
    first = module.recognition_predictor(device="cpu")

    def no_build(*args, **kwargs):
        raise AssertionError("the model was built")

    monkeypatch.setattr(module, "get_model", no_build)
    cached = module.recognition_predictor(device="cpu")
    assert isinstance(cached.model, OnnxRunner)
    assert cached(crops) == first(crops)
