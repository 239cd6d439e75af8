"""CUDA graphs for eager models: one captured graph per input shape, replayed instead of re-launching.

An eager forward of the recognizer launches ~200 kernels from Python (convolutions, batch norms,
activations, the LSTM): about 10 ms of CPU time however small the batch, while the GPU needs a fraction of
that. OCR processes on a GPU are bound by their host's cores (``docs/benchmarks.md``), so those
milliseconds are pages per second. :class:`CUDAGraphs` wraps a model whose forward takes one tensor: the
first call of each ``(shape, dtype, device)`` runs the model twice on a side stream (cuDNN picks its
kernels), captures a third run into a :class:`torch.cuda.CUDAGraph`, and every later call of that shape
copies its input into the graph's input buffer, replays the graph (one launch) and returns a copy of the
output. The same kernels run on the same data, so results equal the eager model's (tested on a GPU).

The predictors bound their input shapes (width buckets and power-of-two row counts: ``pad_batches``), so a
process captures a few dozen graphs at most; they share one memory pool (one shape's activations at a time,
as eager). Past ``max_graphs`` shapes, or if a capture fails (an operation CUDA graphs cannot hold), calls
run the eager model. Calls are serialised by a lock (one input buffer per shape), and a call on another
CUDA stream than the last waits for that replay on the device.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

import torch
from torch import Tensor, nn
from torch.utils._pytree import tree_map

__all__ = ["CUDAGraphs", "graphs_available"]


def graphs_available(device: torch.device) -> bool:
    """Whether :class:`CUDAGraphs` can run on ``device`` (a CUDA device; graphs are off under
    ``VISION_CUDA_GRAPHS=0``)."""
    return device.type == "cuda" and torch.cuda.is_available() and os.environ.get("VISION_CUDA_GRAPHS") != "0"


def _clone(value: Any) -> Any:
    return tree_map(lambda t: t.clone() if isinstance(t, Tensor) else t, value)


class CUDAGraphs(nn.Module):
    """``module`` with its forward replayed from one CUDA graph per input shape (see the module docstring).

    Args:
        module: an eval-mode model on a CUDA device whose ``forward`` takes one tensor.
        max_graphs: shapes captured at most; later new shapes run eagerly.
        warmup: eager runs on a side stream before each capture.
    """

    def __init__(self, module: nn.Module, *, max_graphs: int = 64, warmup: int = 2) -> None:
        super().__init__()
        self.module = module
        self.max_graphs = max_graphs
        self.warmup = warmup
        self._graphs: dict[tuple, tuple[torch.cuda.CUDAGraph, Tensor, Any]] = {}
        self._pool: Any = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self._done: torch.cuda.Event | None = None  # the last replay's end, for callers on other streams

    @property
    def captured(self) -> int:
        """Shapes captured so far."""
        return len(self._graphs)

    def forward(self, x: Tensor) -> Any:
        if self._failed or not x.is_cuda or torch.is_grad_enabled():
            return self.module(x)
        # inference-mode tensors cannot be written outside that mode: no_grad calls get graphs of their own
        key = (tuple(x.shape), x.stride(), x.dtype, x.device, torch.is_inference_mode_enabled())
        with self._lock:
            entry = self._graphs.get(key)
            if entry is None:
                if len(self._graphs) >= self.max_graphs:
                    return self.module(x)
                entry = self._capture(x, key)
                if entry is None:
                    return self.module(x)
            graph, static_in, static_out = entry
            stream = torch.cuda.current_stream(x.device)
            if self._done is not None:  # a replay queued on another stream uses the buffers and the pool
                stream.wait_event(self._done)
            static_in.copy_(x)
            graph.replay()
            out = _clone(static_out)
            self._done = torch.cuda.Event()
            self._done.record(stream)
            return out

    def _capture(self, x: Tensor, key: tuple) -> tuple[torch.cuda.CUDAGraph, Tensor, Any] | None:
        static_in = x.clone()
        side = torch.cuda.Stream(device=x.device)
        side.wait_stream(torch.cuda.current_stream(x.device))
        with torch.cuda.stream(side):
            for _ in range(self.warmup):
                self.module(static_in)
        torch.cuda.current_stream(x.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph, pool=self._pool, capture_error_mode="thread_local"):
                static_out = self.module(static_in)
        except RuntimeError as exc:  # an operation graphs cannot hold: this model runs eagerly from now on
            self._failed = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"CUDA graph capture of {type(self.module).__name__} failed ({self._failed}); "
                          "running it eagerly", stacklevel=3)
            torch.cuda.synchronize(x.device)
            return None
        self._pool = graph.pool()
        self._graphs[key] = (graph, static_in, static_out)
        return self._graphs[key]

    def extra_repr(self) -> str:
        return f"max_graphs={self.max_graphs}, captured={self.captured}"
