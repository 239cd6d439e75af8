"""The recognition predictor's batched device path (vision.predictors.recognition.batching, pad_batch, packed CTC
decoding, pipelining) against the per-crop path it replaced: resize, ``batch_crops``, model, ``ctc_best_path``
and ``stitch_frames`` crop by crop. The same code runs on CUDA; here it runs on the CPU device."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _reco_crops import render_word, word_set

from vision.predictors.recognition.batching import ids_to_strings, plan_batches
from vision.predictors.recognition.predictor import RecognitionPredictor, recognition_predictor
from vision.predictors.recognition.preprocess import (
    STRIDE,
    batch_crops,
    bucket_width,
    pad_batch,
    pad_rows,
    resize_to_height,
    resized_widths,
)
from vision.models.recognition.vocab import VOCAB
from vision.ops.ctc import ctc_best_path, stitch_frames


def _odd_crops() -> list[np.ndarray]:
    """Rendered words and lines (some wider than 192 px once resized) plus degenerate sizes."""
    crops, _ = word_set(16)
    rng = np.random.default_rng(0)
    crops += [render_word("Tobacco RESEARCH report 1984 annual", size=22), render_word("SUBTOTAL: $1,234.50", size=30)]
    crops += [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in [(1, 1), (40, 1), (2, 20), (300, 20),
                                                                         (20, 400), (5, 5)]]
    crops += [np.full((18, 250, 3), 240, np.uint8)]  # a blank line: read as nothing, in several chunks
    return crops


def _reference(p: RecognitionPredictor, crops: list[np.ndarray]) -> list[tuple[str, float]]:
    """The per-crop path: each crop resized, cut in chunks, padded by ``batch_crops``, run one crop at a time and
    decoded by ``ctc_best_path`` (chunks stitched by ``stitch_frames``); greedy decoding."""
    out = []
    for crop in crops:
        img = resize_to_height(crop)
        w = img.shape[1]
        starts = [0]
        if w > p.max_width:
            starts = list(range(0, w - p.max_width, p.max_width - p.overlap)) + [w - p.max_width]
            starts[-1] = -(-starts[-1] // STRIDE) * STRIDE
        frames = []
        for s in starts:
            piece = img[:, s:s + p.max_width]
            x = batch_crops([piece], min(bucket_width(piece.shape[1], p.bucket), p.max_width))
            with torch.inference_mode():
                logits = p.model(x.float() / 255)[0, :-(-piece.shape[1] // STRIDE)]
            frames.append(logits)
        seq = stitch_frames(frames, [s // STRIDE for s in starts])
        path = ctc_best_path(seq[None])[0]
        out.append(("".join(VOCAB[i - 1] for i in path.ids), path.confidence))
    return out


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # see tests/models/conftest.py


@pytest.fixture(scope="module")
def plain() -> RecognitionPredictor:
    return recognition_predictor(device="cpu", onnx=False, lexicon=None, rotate_tall=False, batch_size=8)


def test_batched_path_reads_like_the_per_crop_path(plain: RecognitionPredictor) -> None:
    crops = _odd_crops()
    ref = _reference(plain, crops)
    got = plain(crops)
    same = sum(a[0] == b[0] for a, b in zip(got, ref)) / len(ref)
    assert same >= 0.99, [(a, b) for a, b in zip(got, ref) if a[0] != b[0]]
    np.testing.assert_allclose([c for _, c in got], [c for _, c in ref], atol=1e-3)
    assert got[-1][0] == "" and 0.0 <= got[-1][1] <= 1.0


def test_pool_pipelining_and_static_batches_change_nothing(plain: RecognitionPredictor) -> None:
    crops = _odd_crops() * 3  # many batches of 8: several staged ahead in the pool
    order = np.random.default_rng(1).permutation(len(crops))
    serial = RecognitionPredictor(plain.model, arch=plain.arch, device=plain.device, dtype=torch.float32,
                                  batch_size=8, workers=1, rotate_tall=False)
    pooled = RecognitionPredictor(plain.model, arch=plain.arch, device=plain.device, dtype=torch.float32,
                                  batch_size=8, workers=3, rotate_tall=False)
    expected = serial(crops)
    assert pooled(crops) == expected
    shuffled = pooled([crops[i] for i in order])
    assert shuffled == [expected[i] for i in order]  # input order kept
    assert serial(crops) == expected  # staging buffers reused across calls
    static = RecognitionPredictor(plain.model, arch=plain.arch, device=plain.device, dtype=torch.float32,
                                  batch_size=8, workers=3, rotate_tall=False, pad_batches=True)
    padded = static(crops)  # padded to the batch size (8 < MIN_ROWS): other batch shapes, same readings
    assert [t for t, _ in padded] == [t for t, _ in expected]
    np.testing.assert_allclose([c for _, c in padded], [c for _, c in expected], atol=1e-5)


def test_lexicon_reads_frames_only_for_unknown_words() -> None:
    words = ["Invoice", "Tobacco", "Grzmblt", "RESEARCH", "Xqvrtsz", "TOTAL:", "12/31/1995"]
    crops = [render_word(w, size=22) for w in words]
    p = recognition_predictor(device="cpu", onnx=False, rotate_tall=False, batch_size=4)
    plain = [t for t, _ in recognition_predictor(device="cpu", onnx=False, lexicon=None, batch_size=4)(crops)]
    asked: list[int] = []
    fetch = p._log_probs
    p._log_probs = lambda logits, rows: asked.append(len(rows)) or fetch(logits, rows)  # count the rows fetched
    texts = [t for t, _ in p(crops)]
    assert p.lexicon is not None
    assert 0 < sum(asked) == sum(p.lexicon.needs_check(t) for t in plain) < len(crops)
    for text, greedy in zip(texts, plain):
        assert text == greedy or p.lexicon.needs_check(greedy)  # only unknown words may change


def test_pad_batch_is_batch_crops_on_the_device() -> None:
    rng = np.random.default_rng(2)
    for trial in range(12):
        width = [32, 64, 192][trial % 3]
        crops = [rng.integers(0, 256, (32, int(w), 3), dtype=np.uint8) for w in rng.integers(1, width + 1, 5)]
        if trial % 4 == 0:
            crops = [np.full_like(c, int(rng.integers(256))) for c in crops]  # ties everywhere
        x = torch.from_numpy(rng.integers(0, 256, (5, 32, width, 3), dtype=np.uint8))  # garbage past each crop
        for i, c in enumerate(crops):
            x[i, :, :c.shape[1]] = torch.from_numpy(c)
        out = pad_batch(x, torch.tensor([c.shape[1] for c in crops]))
        assert torch.equal(out, batch_crops(crops, width))


def test_resize_widths_and_in_place_resize() -> None:
    sizes = np.random.default_rng(3).integers(1, 400, (2000, 2))
    sizes[:4] = [[1, 1], [64, 1], [1, 64], [48, 72]]  # 72 * 32 / 48 = 48: exact; halves round to even
    widths = resized_widths(sizes)
    img = np.zeros((1, 1, 3), np.uint8)
    assert widths.tolist() == [max(8, round(w * 32 / h)) for h, w in sizes.tolist()]
    for h, w in sizes[:50].tolist():
        img = np.random.default_rng(h * w).integers(0, 256, (h, w, 3), dtype=np.uint8)
        out = np.zeros((32, 2 * max(8, round(w * 32 / h)), 3), np.uint8)
        resize_to_height(img, out=out[:, :max(8, round(w * 32 / h))])
        np.testing.assert_array_equal(out[:, :max(8, round(w * 32 / h))], resize_to_height(img))
        assert not out[:, max(8, round(w * 32 / h)):].any()
    with pytest.raises(ValueError):
        resize_to_height(img, out=np.zeros((32, 7, 3), np.uint8))


def test_plan_cuts_long_crops_and_groups_by_bucket() -> None:
    plan = plan_batches(np.array([40, 250, 8, 192, 500, 100]), max_width=192, overlap=64, bucket=32, batch_size=2)
    assert plan.owner.tolist() == [0, 1, 1, 2, 3, 4, 4, 4, 4, 5]
    assert plan.start.tolist() == [0, 0, 60, 0, 0, 0, 128, 256, 308, 0]  # the last chunk ends at the crop's end
    assert plan.width.tolist() == [40, 192, 190, 8, 192, 192, 192, 192, 192, 100]
    assert plan.split.tolist() == [False, True, True, False, False, True, True, True, True, False]
    assert [(w, idx.tolist()) for w, idx in plan.batches] == [
        (32, [3]), (64, [0]), (128, [9]), (192, [1, 2]), (192, [4, 5]), (192, [6, 7]), (192, [8])]


def test_ids_to_strings() -> None:
    space, a, b = VOCAB.index(" ") + 1, VOCAB.index("a") + 1, VOCAB.index("é") + 1
    ids = np.array([[a, space, b, 0], [0, 0, 0, 0], [b, b, space, space]], np.int16)
    assert ids_to_strings(ids) == ["a é", "", "éé  "]  # spaces kept, even trailing ones
    assert ids_to_strings(np.zeros((2, 0), np.int16)) == ["", ""]


def test_pad_rows_repeats_the_last_row_up_to_a_power_of_two() -> None:
    x = torch.rand(70, 3, 32, 64)
    padded = pad_rows(x, 1024)
    assert padded.shape == (128, 3, 32, 64)
    torch.testing.assert_close(padded[:70], x, rtol=0, atol=0)
    torch.testing.assert_close(padded[70:], x[-1:].expand(58, -1, -1, -1), rtol=0, atol=0)
    assert pad_rows(torch.rand(3, 2), 1024).shape == (64, 2)  # at least MIN_ROWS
    assert pad_rows(torch.rand(600, 2), 1000).shape == (1000, 2)  # at most the batch size
    assert pad_rows(torch.rand(256, 2), 1024).shape == (256, 2)  # already a power of two: unchanged
    assert pad_rows(torch.rand(3, 2), 8, minimum=8).shape == (8, 2)
    assert pad_rows(torch.rand(0, 2), 1024).shape == (0, 2)  # nothing to repeat


def test_compiled_recognizer_builds_one_graph_per_bucket_for_any_batch_size() -> None:
    """Batches of 5, 70 and 130 crops of one width bucket (padded to 64, 128 and 256 rows) go through one
    compiled graph (the batch dimension is dynamic), and read as the eager model does."""
    graphs = []

    def counting_backend(gm: torch.fx.GraphModule, example_inputs: list) -> object:
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(2))
    compiled = torch.compile(model, backend=counting_backend)
    for n in (5, 70, 130):
        x = torch.rand(n, 3, 32, 64)
        out = compiled(pad_rows(x, 1024))[:n]
        torch.testing.assert_close(out, model(x))
    assert len(graphs) == 1
    torch._dynamo.reset()
