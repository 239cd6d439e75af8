"""The recognition predictor's device-side resize (``resize="device"``, vision.predictors.recognition.device_resize)
against the host path (``cv2`` per crop): staging pixels, readings with the shipped weights, errors. The same
code runs on CUDA; here it runs on the CPU device."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch
from _reco_crops import FONTS, WORDS, render_word

from vision.predictors.recognition.batching import plan_batches
from vision.predictors.recognition.device_resize import FIELDS, pack_batch, resize_packed
from vision.predictors.recognition.predictor import RecognitionPredictor, recognition_predictor
from vision.predictors.recognition.preprocess import InvalidCrop, resize_to_height, resized_widths


def _word_crops(n: int = 300) -> list[np.ndarray]:
    """``n`` fixed real-looking crops, 10-40 px high: one in ten a 4-word line (wider than 192 px once resized,
    so split in chunks), one in fifty turned by 90 degrees (tall: read rotated)."""
    rng = np.random.default_rng(7)
    crops = []
    for i in range(n):
        text = " ".join(WORDS[j] for j in rng.integers(0, len(WORDS), 4 if i % 10 == 0 else 1))
        crop = render_word(text, FONTS[i % len(FONTS)], int(rng.integers(9, 37)), pad=int(rng.integers(1, 4)),
                           noise=3.0, seed=i)
        if i % 50 == 25:
            crop = np.ascontiguousarray(np.rot90(crop, 1 if i % 100 == 25 else 3))
        crops.append(crop)
    return crops


CROPS = _word_crops()


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # see tests/models/conftest.py


@pytest.fixture(scope="module")
def host() -> RecognitionPredictor:
    return recognition_predictor(device="cpu", onnx=False, lexicon=None, batch_size=64)


def _device(host: RecognitionPredictor, **kw: object) -> RecognitionPredictor:
    options = {"batch_size": host.batch_size, **kw}
    return RecognitionPredictor(host.model, arch=host.arch, device=host.device, dtype=torch.float32,
                                resize="device", **options)


def _staged(crops: list[np.ndarray], batch_size: int = 1024) -> Iterator[tuple[np.ndarray, int, np.ndarray]]:
    """Every piece ``(crop index, start, width)`` and its device-resized ``[32, width, 3]`` pixels."""
    sizes = np.array([c.shape[:2] for c in crops])
    resized = resized_widths(sizes)
    plan = plan_batches(resized, max_width=192, overlap=64, bucket=32, batch_size=batch_size)
    for width, pieces in plan.batches:
        packed = pack_batch(crops, sizes, resized, plan, pieces, width)
        assert packed.meta.shape == (len(FIELDS), len(pieces))
        out = resize_packed(packed.flat, torch.from_numpy(packed.meta), packed.groups, height=32, out_width=width)
        assert out.shape == (len(pieces), 32, width, 3) and out.dtype == torch.uint8
        for j, piece in enumerate(pieces.tolist()):
            w = int(plan.width[piece])
            yield int(plan.owner[piece]), int(plan.start[piece]), out[j, :, :w].numpy()


def test_device_staging_is_close_to_cv2() -> None:
    """Enlarged crops (<= 32 px high, bilinear both ways): mean |diff| <= 0.25 grey levels, max 2 (OpenCV's
    fixed-point weights round differently; measured: 0.14 and 1 on these 130 pieces). Shrunk crops
    (roi_align's ceil(scale)^2 bilinear samples vs INTER_AREA's exact box average): mean <= 3 (measured
    0.07-2.04 on these 24). Chunks of split crops are the columns of the whole resized crop."""
    crops = [c for c in CROPS[:100] if c.shape[0] <= c.shape[1]]
    crops += [render_word("RESEARCH 1984", FONTS[k % 4], size) for k, size in enumerate(range(6, 90, 7))]
    crops += [render_word("Invoice", size=140), render_word("TOTAL", size=4, pad=1)]  # 4x shrunk, 6 px high
    heights = {c.shape[0] for c in crops}
    assert min(heights) <= 10 and max(heights) >= 110 and len(heights) >= 25
    seen = {"enlarged": 0, "shrunk": 0, "chunks": 0}
    for i, start, got in _staged(crops, batch_size=48):
        expected = resize_to_height(crops[i])[:, start:start + got.shape[1]]
        diff = np.abs(got.astype(np.int16) - expected)
        if crops[i].shape[0] <= 32:
            assert diff.mean() <= 0.25 and diff.max() <= 2, (crops[i].shape, diff.mean(), diff.max())
            seen["enlarged"] += 1
        else:
            assert diff.mean() <= 3.0, (crops[i].shape, diff.mean())
            seen["shrunk"] += 1
        seen["chunks"] += start > 0
    assert min(seen.values()) >= 5, seen


def test_degenerate_sizes_are_resized() -> None:
    """Noise crops of 1-pixel rows or columns, stretched to the 8-column minimum, long and thin: the widths of
    the host path, bilinear values where both enlarge; flat colours stay exact at any scale."""
    rng = np.random.default_rng(0)
    crops = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in [(1, 1), (2, 20), (5, 5), (20, 400),
                                                                        (40, 1), (300, 20), (33, 900)]]
    crops += [np.full((h, w, 3), 17 * h % 256, np.uint8) for h, w in [(1, 3), (31, 45), (70, 9), (33, 700)]]
    for i, start, got in _staged(crops, batch_size=3):
        expected = resize_to_height(crops[i])[:, start:start + got.shape[1]]
        assert got.shape == expected.shape
        if i >= 7:
            assert (got == crops[i][0, 0]).all()
        elif i < 4:  # noise shrunk (INTER_AREA vs supersampling) differs by up to 7 levels on average
            assert np.abs(got.astype(np.int16) - expected).mean() <= 0.25


def test_device_path_reads_like_the_host_path(host: RecognitionPredictor) -> None:
    """Shipped weights, greedy decoding, 300 crops 10-40 px high (30 split lines, 6 tall): the same strings on
    >= 99% of them."""
    heights = np.array([min(c.shape[:2]) for c in CROPS])
    assert heights.min() <= 11 and heights.max() >= 38
    assert (resized_widths(np.array([c.shape[:2] for c in CROPS])) > 192).sum() >= 25
    device = _device(host)
    expected, got = host(CROPS), device(CROPS)
    same = sum(a[0] == b[0] for a, b in zip(expected, got)) / len(CROPS)
    assert same >= 0.99, [(a[0], b[0]) for a, b in zip(expected, got) if a[0] != b[0]]
    close = np.abs(np.array([c for _, c in expected]) - [c for _, c in got])
    assert np.median(close) < 0.01
    assert sum(len(t) > 20 for t, _ in got) >= 25  # the lines were read whole, not only their first chunk


def test_device_path_pipelining_changes_nothing(host: RecognitionPredictor) -> None:
    """Pool workers, small batches (chunks of one crop in different batches), static batch shapes."""
    crops = CROPS[:60]
    serial = _device(host, batch_size=8, workers=1)(crops)
    assert _device(host, batch_size=8, workers=3)(crops) == serial
    padded = _device(host, batch_size=8, workers=3, pad_batches=True)(crops)
    assert [t for t, _ in padded] == [t for t, _ in serial]
    np.testing.assert_allclose([c for _, c in padded], [c for _, c in serial], atol=1e-5)


def test_tall_and_long_crops_on_the_device_path(host: RecognitionPredictor) -> None:
    device = _device(host)
    tall = np.ascontiguousarray(np.rot90(render_word("RESEARCH", size=22), 1))
    line = render_word("Tobacco RESEARCH report 1984", size=22)
    assert [t for t, _ in device([tall, line])] == ["RESEARCH", "Tobacco RESEARCH report 1984"]
    narrow = _device(host, max_width=128, overlap=48)
    assert narrow([line])[0][0] == "Tobacco RESEARCH report 1984"  # three chunks and more


def test_split_crops_are_packed_once_per_batch() -> None:
    crops = [render_word("Tobacco RESEARCH report 1984 annual", size=22), render_word("No.", size=20)]
    sizes = np.array([c.shape[:2] for c in crops])
    resized = resized_widths(sizes)
    plan = plan_batches(resized, max_width=192, overlap=64, bucket=32, batch_size=16)
    width, pieces = plan.batches[-1]
    assert (plan.owner[pieces] == 0).sum() >= 3
    packed = pack_batch(crops, sizes, resized, plan, pieces, width)
    assert packed.flat.numel() == crops[0].size  # the line once, for all its chunks
    assert sorted(packed.meta[FIELDS.index("row")].tolist()) == list(range(len(pieces)))


def test_defaults_and_bad_input(host: RecognitionPredictor) -> None:
    assert host.resize == "host"  # the CPU default: cv2 on the host is the fastest there
    cuda = RecognitionPredictor(host.model, arch=host.arch, device=torch.device("cuda"), dtype=torch.float32)
    assert cuda.resize == "device"  # the CUDA default (measured faster); nothing is allocated before a call
    device = _device(host)
    assert device([]) == []
    with pytest.raises(InvalidCrop, match="crop 1"):
        device([CROPS[0], np.zeros((0, 10, 3), np.uint8)])
    with pytest.raises(InvalidCrop):
        device(["not an image"])
    with pytest.raises(InvalidCrop):
        device([np.zeros((4, 4, 5), np.uint8)])
    with pytest.raises(ValueError, match="single"):
        device(np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(ValueError, match="resize"):
        recognition_predictor(device="cpu", onnx=False, lexicon=None, resize="gpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_device_resize_reads_like_the_cpu_host_path(host: RecognitionPredictor) -> None:
    """On CUDA (pinned packing, asynchronous copies, three batches staged ahead): the same strings as the CPU
    host path on >= 99% of the crops, in small batches so many are in flight at once."""
    cuda = recognition_predictor(device="cuda", lexicon=None, batch_size=16, resize="device")
    expected, got = host(CROPS), cuda(CROPS)
    same = sum(a[0] == b[0] for a, b in zip(expected, got)) / len(CROPS)
    assert same >= 0.99, [(a[0], b[0]) for a, b in zip(expected, got) if a[0] != b[0]]
