"""The model server (``vision.predictors.remote``): predictors whose model step runs in another process read
exactly what the same predictors read with their models at home, and the server's errors reach the caller."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
from _ocr_stages import render_page  # noqa: E402

from vision.predictors.detection.predictor import detection_predictor  # noqa: E402
from vision.predictors.recognition.predictor import recognition_predictor  # noqa: E402
from vision.predictors.remote import ModelServer, install, installed  # noqa: E402


@pytest.fixture(scope="module")
def server():
    with ModelServer("cpu", 1) as srv:
        yield srv


@pytest.fixture
def client(server):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the server runs: the same float sums, so equal results
    install(server.client(0))
    try:
        yield installed()
    finally:
        install(None)
        torch.set_num_threads(threads)


def _words(doc) -> list[tuple]:
    return [(w.geometry, w.value, w.confidence) for page in doc.pages for w in page.words]


def test_the_ocr_pipeline_reads_the_same_with_its_models_in_a_server(client) -> None:
    """The same resize modes on both sides (the server fits pages and resizes crops on its device), so the
    words, boxes and confidences are equal, not close."""
    import vision

    remote = vision.ocr_predictor(device="cpu", onnx=False)
    assert remote.pipeline["detect"].predictor.remote is not None
    assert remote.pipeline["recognize"].predictor.remote is not None
    install(None)
    local = vision.ocr_predictor(
        device="cpu", det_predictor=detection_predictor(device="cpu", resize="device", onnx=False),
        reco_predictor=recognition_predictor(device="cpu", resize="device", onnx=False, slanted=False))
    pages = [render_page()[0], render_page(["Remote models", "read the same 42 words"], size=(300, 700))[0]]
    got, want = _words(remote(pages)), _words(local(pages))
    assert len(want) >= 8 and got == want


def test_zoomed_detection_and_long_crops_match(client) -> None:
    det = detection_predictor(device="cpu", onnx=False)
    reco = recognition_predictor(device="cpu", onnx=False, lexicon=None)
    assert det.remote is not None and reco.remote is not None and det.model is None
    install(None)
    home_det = detection_predictor(device="cpu", onnx=False, resize="device")
    home_reco = recognition_predictor(device="cpu", onnx=False, lexicon=None, resize="device")
    page = render_page()[0]
    for zooms in (None, [0.5]):
        a, b = det([page], zooms)[0], home_det([page], zooms)[0]
        assert np.array_equal(a.boxes, b.boxes) and np.array_equal(a.scores, b.scores)
    line = render_page(["a line far wider than the recognizer's widest bucket, read in chunks"],
                       size=(60, 1400), top=10)[0]
    tall = np.ascontiguousarray(line[:, :300].transpose(1, 0, 2))
    crops = [line, line[:, :300], tall]  # split into chunks, plain, read turned
    assert reco(crops) == home_reco(crops)


def test_server_errors_reach_the_caller_and_it_keeps_serving(client) -> None:
    with pytest.raises(Exception, match="unknown model server method"):
        client.call((("task", "detection"),), "nonsense")
    with pytest.raises(Exception):
        client.call((("arch", "no-such-model"), ("task", "detection")), "maps", [], (64, 64), [])
    det = detection_predictor(device="cpu", onnx=False)
    assert len(det([render_page()[0]])[0]) > 0


def test_without_a_client_builders_stay_local() -> None:
    assert installed() is None
    det = detection_predictor(device="cpu", onnx=False)
    assert det.remote is None and det.model is not None


def test_the_server_stops_and_a_call_after_its_end_fails_instead_of_waiting() -> None:
    from vision.errors import VisionError

    srv = ModelServer("cpu", 1)
    assert srv.process.is_alive()
    srv.process.kill()  # however it ends: here without a word to its clients
    srv.process.join(10)
    with pytest.raises(VisionError, match="model server stopped"):
        srv.client(0).call((("task", "detection"),), "maps", [], (64, 64), [])
    srv.close()
    assert not srv.process.is_alive()


def test_arena_round_trip_keeps_structure_dtypes_and_values() -> None:
    """Lists, tuples, dicts and dataclasses of numpy arrays and tensors (bfloat16, bool, empty ones) come
    back equal and of their kind; the block grows for a bigger message."""
    import torch

    from vision.predictors._arena import Arena, unpack
    from vision.predictors.recognition.device_resize import Packed

    rng = np.random.default_rng(0)
    packed = Packed(torch.from_numpy(rng.integers(0, 255, 1000, dtype=np.uint8)),
                    rng.integers(0, 9, (5, 3)), ((0, 3, 32, 40),), 96)
    message = ([rng.random((7, 5)).astype(np.float32), torch.rand(3, 4).to(torch.bfloat16)],
               {"ids": torch.zeros((2, 0), dtype=torch.int16), "mask": rng.random(6) > 0.5},
               packed, (64, 64), "text", 0.5)
    arena = Arena(size=256)
    out, block = arena.pack(message)
    assert arena.block is block and block.numel() >= 1000 and block.is_shared()
    back = unpack(out, block, copy=True)
    assert np.array_equal(back[0][0], message[0][0]) and isinstance(back[0][0], np.ndarray)
    assert back[0][1].dtype == torch.bfloat16 and torch.equal(back[0][1], message[0][1])
    assert back[1]["ids"].shape == (2, 0) and np.array_equal(back[1]["mask"], message[1]["mask"])
    assert isinstance(back[2], Packed) and torch.equal(back[2].flat, packed.flat)
    assert np.array_equal(back[2].meta, packed.meta)
    assert back[2].groups == packed.groups and back[2].width == 96
    assert back[3:] == ((64, 64), "text", 0.5)
    small, again = arena.pack([np.ones(3)])
    assert again is block  # reused while it fits
    assert np.array_equal(unpack(small, again)[0], np.ones(3))


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_a_gpu_server_reads_what_the_gpu_predictors_read_at_home() -> None:
    """bf16 models on CUDA in the server (CUDA graphs on: it has the GPU to itself) against the same
    predictors in this process: equal boxes, scores and readings."""
    import torch

    page = render_page()[0]
    line = render_page(["a line far wider than the recognizer's widest bucket, read in chunks"],
                       size=(60, 1400), top=10)[0]
    crops = [line, line[:, :300], np.ascontiguousarray(line[:, :300].transpose(1, 0, 2))]
    home_det = detection_predictor(device="cuda", dtype=torch.bfloat16)
    home_reco = recognition_predictor(device="cuda", dtype=torch.bfloat16)
    want_det, want_reco = home_det([page], [0.5])[0], home_reco(crops)
    with ModelServer("cuda", 1) as srv:
        install(srv.client(0))
        try:
            det = detection_predictor(device="cuda", dtype=torch.bfloat16)
            reco = recognition_predictor(device="cuda", dtype=torch.bfloat16)
            assert det.remote is not None and reco.remote is not None
            got_det, got_reco = det([page], [0.5])[0], reco(crops)
        finally:
            install(None)
    assert np.array_equal(got_det.boxes, want_det.boxes) and np.array_equal(got_det.scores, want_det.scores)
    assert got_reco == want_reco


def test_calls_from_several_threads_take_turns(client) -> None:
    """Threads of one worker share its client (one reply queue, one arena): each gets its own answer."""
    from concurrent.futures import ThreadPoolExecutor

    det = detection_predictor(device="cpu", onnx=False)
    pages = [render_page()[0], render_page(["Another page", "of words"])[0]] * 3
    install(None)
    home = detection_predictor(device="cpu", onnx=False, resize="device")
    want = [home([p])[0].boxes for p in pages]
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda p: det([p])[0].boxes, pages))
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
