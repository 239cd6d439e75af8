"""Bounded model input shapes (the CUDA and compile paths: cuDNN plans and compiled graphs are made per shape)
and parity with the unpadded fp32 eager run, on the CPU.

Tolerance: padded rows never change a real row's reading. Texts must be equal and confidences within 1e-4
(float32 GEMMs of another batch size may sum in another order); detector probabilities within 1e-5.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _reco_crops import render_word, word_set

from vision.predictors.detection.predictor import INPUT_SHAPES, detection_predictor
from vision.predictors.recognition.predictor import recognition_predictor


class Recorder:
    """A model wrapper that records every input shape."""

    def __init__(self, model):
        self.model, self.shapes = model, set()

    def __call__(self, x):
        self.shapes.add(tuple(x.shape))
        return self.model(x)


def _crops(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Word crops of many widths, long lines (split) and vertical words (tall)."""
    words, _ = word_set(40)
    out = []
    for i in range(n):
        kind = i % 5
        if kind == 3:  # a long line: several words side by side, wider than max_width once resized
            parts = [words[j % len(words)] for j in rng.integers(0, len(words), 3 + i % 3)]
            h = min(p.shape[0] for p in parts)
            out.append(np.concatenate([p[:h] for p in parts], axis=1))
        elif kind == 4:  # vertical text
            out.append(np.ascontiguousarray(np.rot90(render_word("TOTAL", size=14 + i % 9))))
        else:
            w = words[int(rng.integers(len(words)))]
            scale = float(rng.uniform(0.6, 1.6))
            out.append(np.ascontiguousarray(np.repeat(w, max(1, round(scale)), axis=1)) if scale > 1.2 else w)
    return out


@pytest.fixture(scope="module")
def recognizers():
    padded = recognition_predictor(device="cpu", onnx=False, batch_size=32, min_rows=8, pad_batches=True,
                                   lexicon=None, workers=1)
    plain = recognition_predictor(device="cpu", onnx=False, batch_size=32, pad_batches=False, lexicon=None,
                                  workers=1)
    padded.model = Recorder(padded.model)
    return padded, plain


def test_recognition_shapes_are_bounded_and_read_the_same(recognizers) -> None:
    padded, plain = recognizers
    rng = np.random.default_rng(0)
    for n in (1, 5, 12):  # calls of many sizes: the crops' widths and counts all differ
        crops = _crops(rng, n)
        a, b = padded(crops), plain(crops)
        assert [t for t, _ in a] == [t for t, _ in b]
        np.testing.assert_allclose([c for _, c in a], [c for _, c in b], atol=1e-4)
    widths = {s[3] for s in padded.model.shapes}
    rows = {s[0] for s in padded.model.shapes}
    assert widths <= {32, 64, 96, 128, 160, 192}
    assert rows <= {8, 16, 32}  # powers of two from min_rows to batch_size
    assert len(padded.model.shapes) <= 18


def test_gpu_defaults_are_bf16_eager_and_compile_is_opt_in() -> None:
    from vision.pipelines.ocr.options import OCROptions
    from vision.pipelines.ocr.predictor import gpu_defaults

    assert gpu_defaults(OCROptions(device="cuda")) == (torch.bfloat16, False)
    assert gpu_defaults(OCROptions(device="cuda", compile=True)) == (torch.bfloat16, True)
    assert gpu_defaults(OCROptions(device="cuda", dtype=torch.float32, compile=False)) == (torch.float32, False)
    assert gpu_defaults(OCROptions(device="cpu")) == (torch.float32, False)
    assert gpu_defaults(OCROptions(device="cuda", onnx=True)) == (torch.float32, False)


def test_detection_batches_are_padded_to_static_shapes() -> None:
    padded = detection_predictor(device="cpu", onnx=False, batch_size=4, shapes=((256, 256), (256, 192)))
    padded.pad_batches = True
    padded.model = Recorder(padded.model)
    plain = detection_predictor(device="cpu", onnx=False, batch_size=4, shapes=((256, 256), (256, 192)))
    rng = np.random.default_rng(1)
    pages = [np.full((int(h), int(w), 3), 255, np.uint8) for h, w in rng.integers(150, 600, size=(5, 2))]
    for page in pages:  # a few dark bars: something to detect
        for y in range(20, page.shape[0] - 20, 40):
            page[y:y + 10, 15:page.shape[1] // 2] = 30
    ra, rb = padded(pages), plain(pages)
    for x, y in zip(ra, rb):
        np.testing.assert_allclose(x.boxes, y.boxes, atol=1e-5)
    assert {s[0] for s in padded.model.shapes} <= {1, 2, 4}
    assert {s[2:] for s in padded.model.shapes} <= {(256, 256), (256, 192)}
    assert INPUT_SHAPES  # the default set the CUDA path pads to


def test_detector_row_counts() -> None:
    from vision.predictors.detection.predictor import padded_rows

    assert [padded_rows(n, 16) for n in (1, 3, 4, 5, 8, 9, 16)] == [4, 4, 4, 8, 8, 16, 16]
    assert [padded_rows(n, 4) for n in (1, 2, 3, 4)] == [1, 2, 4, 4]
    assert [padded_rows(n, 12) for n in (1, 5, 9, 12)] == [4, 8, 12, 12]


def test_gpu_batch_sizes_replace_the_cpu_defaults_only() -> None:
    from vision.pipelines.ocr.options import OCROptions
    from vision.pipelines.ocr.predictor import gpu_sizes

    o = gpu_sizes(OCROptions(device="cuda", det_batch_size=2))
    assert (o.det_batch_size, o.reco_batch_size, o.pages_per_batch) == (2, 1024, 64)
    assert gpu_sizes(OCROptions(device="cpu")) == OCROptions(device="cpu")
