"""CUDA graph replay (:mod:`vision.fast.cuda_graphs`) against the eager models it wraps."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from vision.fast.cuda_graphs import CUDAGraphs, graphs_available
from vision.predictors._device import place

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def test_cpu_runs_the_module_and_graphs_are_cuda_only(monkeypatch) -> None:
    model = nn.Conv2d(3, 4, 3).eval()
    x = torch.rand(2, 3, 8, 8)
    with torch.inference_mode():
        assert torch.equal(CUDAGraphs(model)(x), model(x))
    assert not graphs_available(torch.device("cpu"))
    placed, _ = place(model, torch.device("cpu"), torch.float32)
    assert placed is model
    with pytest.raises(ValueError, match="CUDA"):
        place(model, torch.device("cpu"), torch.float32, cuda_graphs=True)


@pytest.mark.gpu
@cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_recognizer_replays_equal_eager(dtype: torch.dtype) -> None:
    """The CRNN (convolutions, batch norms, the cuDNN LSTM) replayed from graphs gives the eager logits
    exactly, on fresh inputs of several shapes, each shape captured once."""
    from vision.models import get_model

    model, _ = place(get_model("crnn_mobilenet_small").eval(), torch.device("cuda"), dtype, cuda_graphs=False)
    graphed = CUDAGraphs(model)
    gen = torch.Generator(device="cuda").manual_seed(0)
    with torch.inference_mode():
        for rows, width in [(64, 96), (64, 192), (128, 96), (64, 96), (128, 96)]:
            x = torch.rand(rows, 3, 32, width, device="cuda", generator=gen, dtype=dtype)
            assert torch.equal(graphed(x), model(x)), (rows, width)
    assert graphed.captured == 3


@pytest.mark.gpu
@cuda
def test_threads_on_their_own_streams_get_their_own_results() -> None:
    """Four threads, each on its own CUDA stream, call one graphed recognizer with inputs of one shape (one
    graph, one input buffer): a replay waits for the last one on the device, so each gets its eager logits."""
    import threading

    from vision.models import get_model

    model, _ = place(get_model("crnn_mobilenet_small").eval(), torch.device("cuda"), torch.bfloat16,
                     cuda_graphs=False)
    graphed = CUDAGraphs(model)
    inputs = [torch.rand(256, 3, 32, 192, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
    with torch.inference_mode():
        want = [model(x) for x in inputs]
        graphed(inputs[0])  # captured here, before the threads
    got: dict[int, list[torch.Tensor]] = {}

    def run(k: int) -> None:
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream), torch.inference_mode():
            stream.wait_stream(torch.cuda.default_stream())
            outs = [graphed(inputs[k]) for _ in range(20)]
            stream.synchronize()
        got[k] = outs

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert graphed.captured == 1
    for k in range(4):
        assert all(torch.equal(out, want[k]) for out in got[k]), k


@pytest.mark.gpu
@cuda
def test_detector_replays_equal_eager() -> None:
    from vision.models.detection.dbnet import DBProbability
    from vision.predictors.detection.predictor import _dbnet

    model, _ = place(DBProbability(_dbnet("db_mobilenet_v3_large", "default")).eval(), torch.device("cuda"),
                     torch.bfloat16, cuda_graphs=False)
    graphed = CUDAGraphs(model)
    with torch.inference_mode():
        for shape in [(2, 3, 1024, 768), (2, 3, 768, 1024), (2, 3, 1024, 768)]:
            x = torch.rand(shape, device="cuda", dtype=torch.bfloat16)
            assert torch.equal(graphed(x), model(x)), shape
    assert graphed.captured == 2


@pytest.mark.gpu
@cuda
def test_capture_failure_falls_back_to_eager() -> None:
    class Syncs(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * float(x.sum().item() > 0)  # a host sync: not capturable

    graphed = CUDAGraphs(Syncs())
    x = torch.ones(4, device="cuda")
    with torch.inference_mode(), pytest.warns(UserWarning, match="eagerly"):
        assert torch.equal(graphed(x), x)
    with torch.inference_mode():
        assert torch.equal(graphed(-x), -x * 0) and graphed.captured == 0


@pytest.mark.gpu
@cuda
def test_ocr_defaults_use_graphs_and_read_as_eager(monkeypatch) -> None:
    """The CUDA OCR default (bf16) wraps both models in graphs and returns what the eager models return."""
    from importlib import resources

    import numpy as np
    from PIL import Image

    from vision.pipelines.ocr import ocr_predictor

    with resources.as_file(resources.files("vision.assets") / "sample_page.png") as path:
        page = np.asarray(Image.open(path).convert("RGB"))
    graphed = ocr_predictor(device="cuda")
    assert isinstance(graphed.pipeline["recognize"].predictor.model, CUDAGraphs)
    words = [(w.value, w.geometry) for w in graphed([page, page[:700]]).pages[1].words]
    monkeypatch.setenv("VISION_CUDA_GRAPHS", "0")
    eager = ocr_predictor(device="cuda")
    assert not isinstance(eager.pipeline["recognize"].predictor.model, CUDAGraphs)
    assert words == [(w.value, w.geometry) for w in eager([page, page[:700]]).pages[1].words]
