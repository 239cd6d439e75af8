"""One process runs the models for many: a model server on the GPU and the remote predictors of its workers.

Processes that each hold their own models on one GPU each make a CUDA context, and the GPU time-slices between
contexts: with 12 such processes on an H200 a third of each one's time went to waiting for its kernels
(``docs/benchmarks.md``, *One model process*). Here one process, the :class:`ModelServer`, holds the models on
the device, and worker processes keep everything else: page decoding, pre- and post-processing, every pipeline
stage. In a worker where a :class:`Client` is installed (:func:`install`), the detection and recognition
builders asked for the server's device return predictors whose model step runs in the server: a detector ships
the raw pages (the server fits them to the input shape on its device and returns the probability maps), a
recognizer ships its packed crops (resized on the device; the logits, best paths and confidences come back).
Messages cross through one reusable shared-memory block per side (:mod:`vision.predictors._arena`), and maps
and logits come back in the model's dtype, so a worker reads exactly what the same predictors read with their
models at home (``tests/models/test_model_server.py``). The server builds each model on its first request
(keyed by the builder's arguments) and answers requests in arrival order, ``threads`` at a time.

Where it stands (``docs/benchmarks.md``, *One model process*): with a shared-memory file per tensor, one
server thread on an H200 read 107 pages/s with 15 workers, below 12 processes with models of their own
(132-154 pages/s); the reusable blocks cut a page's traffic from 15-21 to 2-3 ms on our 2-core CPU and are not
measured on a GPU yet. ``benchmarks/gpu_throughput.py --server`` and ``vision ocr --model-server`` use it;
no interface does by default.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from vision.errors import VisionError
from vision.predictors._arena import Arena, unpack

__all__ = ["Client", "ModelServer", "install", "installed", "remote_detector", "remote_recognizer"]

_CLIENT: list[Client | None] = [None]


class Client:
    """A worker's handle on a :class:`ModelServer` (picklable at process start: pass it to the worker).

    Args:
        requests: the server's request queue (shared by its workers).
        replies: this worker's reply queue.
        slot: this worker's index in the server's reply queues.
        device: the server's device: builders asked for a device of its type return remote predictors.
        alive: the read end of a pipe whose only write end the server holds: readable (end of file) once the
            server is gone, however it ended, so a call fails instead of waiting for ever.
    """

    def __init__(self, requests: Any, replies: Any, slot: int, device: str, alive: Any) -> None:
        self.requests, self.replies, self.slot = requests, replies, slot
        self.device, self.alive = device, alive
        self._arena: Arena | None = None
        self._lock = threading.Lock()  # one request at a time: one reply queue, one arena

    def serves(self, device: torch.device) -> bool:
        """Whether models asked for on ``device`` run in the server."""
        return device.type == torch.device(self.device).type

    def call(self, spec: tuple, method: str, *args: Any) -> Any:
        """Run ``method`` (``"maps"`` or ``"forward"``) of the model ``spec`` in the server; raises what it
        raised there. Calls from several threads take turns."""
        _share_by_name()
        with self._lock:
            if self._arena is None:
                self._arena = Arena()
            self.requests.put((self.slot, spec, method, *self._arena.pack(args)))
            while True:
                try:
                    ok, value, block = self.replies.get(timeout=0.5)
                    break
                except queue.Empty:
                    if self.alive.poll():
                        raise VisionError(None, "the model server stopped: its models cannot run") from None
            if not ok:
                raise value
            return unpack(value, block, copy=True)  # the server reuses its block for the next answer

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_arena", "_lock")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _arena=None, _lock=threading.Lock())  # each process its own arena


def _share_by_name() -> None:
    """Shared tensors (the arenas' blocks) cross by file name: torch's default passes a file descriptor per
    tensor over a socket, which cost ~30 ms a tensor with 15 workers on a 16-core host."""
    import torch.multiprocessing as tmp

    if tmp.get_sharing_strategy() != "file_system":
        tmp.set_sharing_strategy("file_system")


def install(client: Client | None) -> None:
    """Make this process's detectors and recognizers on the server's device remote (``None``: local again)."""
    _CLIENT[0] = client


def installed() -> Client | None:
    """The client installed in this process, if any."""
    return _CLIENT[0]


def _key(**kwargs: Any) -> tuple:
    """A hashable spec of builder arguments."""
    return tuple(sorted((k, tuple(map(tuple, v)) if k == "shapes" and v else v) for k, v in kwargs.items()))


class _RemoteMaps:
    """A detector's model step in the server: raw pages -> probability maps (float32) and fitted sizes."""

    def __init__(self, client: Client, spec: tuple) -> None:
        self.client, self.spec = client, spec

    def __call__(self, images: list[Any], shape: tuple[int, int], zooms: list[float]
                 ) -> tuple[np.ndarray, list[tuple[int, int]]]:
        probs, sizes = self.client.call(self.spec, "maps", list(images), tuple(shape), list(zooms))
        return probs.float().numpy(), sizes


class _RemoteForward:
    """A recognizer's model step in the server: a packed batch -> logits, best-path ids and confidences."""

    def __init__(self, client: Client, spec: tuple) -> None:
        self.client, self.spec = client, spec

    def __call__(self, buffer: Any, widths: np.ndarray, frames: np.ndarray
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, ids, confidence = self.client.call(self.spec, "forward", buffer, widths, frames)
        return logits.float(), ids, confidence


def remote_detector(client: Client, *, config: Any, params: Any, straight: bool, outlines: bool,
                    **builder: Any) -> Any:
    """A detection predictor on the host whose model step runs in the server (``builder``: the
    :func:`~vision.predictors.detection.predictor.detection_predictor` arguments the server builds with)."""
    from vision.predictors.detection.predictor import DetectionPredictor

    predictor = DetectionPredictor(None, mean=config.mean, std=config.std, device=torch.device("cpu"),
                                   batch_size=builder["batch_size"], straight=straight, params=params,
                                   resize="host", shapes=tuple(builder["shapes"]), pad_batches=False,
                                   outlines=outlines)
    predictor.remote = _RemoteMaps(client, _key(task="detection", **builder))
    return predictor


def remote_recognizer(client: Client, arch: str, batch_size: int, options: dict[str, Any], **builder: Any
                      ) -> Any:
    """A recognition predictor on the host (lexicon, rereads, decoding of split crops) whose model step runs
    in the server (``builder``: the arguments the server builds its recognizer with)."""
    from vision.predictors.recognition.predictor import RecognitionPredictor

    options = {**options, "resize": "device", "pad_batches": False}  # crops packed raw, resized there
    predictor = RecognitionPredictor(None, arch=arch, device=torch.device("cpu"), dtype=torch.float32,
                                     batch_size=batch_size, **options)
    builder["min_rows"] = options.get("min_rows", predictor.min_rows)
    predictor.remote = _RemoteForward(client, _key(task="recognition", arch=arch, batch_size=batch_size,
                                                   **builder))
    return predictor


class ModelServer:
    """The process that holds the models on ``device`` and runs them for ``workers`` clients, ``threads``
    requests at once (:func:`serve`).

    Use as a context manager (or call :meth:`close`); give worker ``k`` :meth:`client` ``(k)`` when it starts.
    """

    def __init__(self, device: str, workers: int, threads: int = 1) -> None:
        import torch.multiprocessing as tmp

        ctx = tmp.get_context("spawn")
        self.device = device
        self.requests = ctx.Queue()
        self.replies = [ctx.Queue() for _ in range(workers)]
        self._alive, held = ctx.Pipe(duplex=False)
        self.process = ctx.Process(target=serve, args=(device, self.requests, self.replies, threads, held),
                                   daemon=True, name="vision-model-server")
        self.process.start()
        held.close()  # the server holds the only write end now

    def client(self, slot: int) -> Client:
        """Worker ``slot``'s handle."""
        return Client(self.requests, self.replies[slot], slot, self.device, self._alive)

    def close(self, timeout: float = 30.0) -> None:
        """Stop the server (after the requests already queued)."""
        if self.process.is_alive():
            self.requests.put(None)
            self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _build(spec: tuple, device: str) -> Any:
    kwargs = dict(spec)
    task = kwargs.pop("task")
    if task == "detection":
        from vision.predictors.detection.predictor import detection_predictor

        return detection_predictor(device=device, resize="device", onnx=False, **kwargs)
    from vision.predictors.recognition.predictor import recognition_predictor

    return recognition_predictor(device=device, resize="device", onnx=False, lexicon=None, slanted=False,
                                 **kwargs)


def _answer(predictor: Any, method: str, args: tuple) -> Any:
    if method == "maps":  # the maps cross in the model's dtype, copied from the device straight into the arena
        canvases, sizes = predictor._fit(*args)
        return predictor.device_probabilities(canvases), sizes
    if method == "forward":
        logits, ids, confidence = predictor._forward(*args)
        if logits.device.type == "cuda":  # the host copies of ids and confidence are queued
            torch.cuda.current_stream(logits.device).synchronize()
        return logits.to(predictor.dtype), ids, confidence
    raise ValueError(f"unknown model server method {method!r}")


def serve(device: str, requests: Any, replies: Sequence[Any], threads: int = 1, held: Any = None) -> None:
    """The server's loop: answer each ``(slot, spec, method, args)`` request on ``replies[slot]`` with
    ``(True, value)`` or ``(False, exception)`` until ``None`` arrives. ``threads`` requests run at once,
    each thread on its own CUDA stream, so one request's copies and host work overlap another's kernels.
    ``held`` (the write end of the clients' ``alive`` pipe) is only held: it closes when this process ends."""
    from concurrent.futures import ThreadPoolExecutor

    models: dict[tuple, Any] = {}
    arenas: dict[int, Arena] = {}  # one per worker: its answers (a worker has one request at a time)
    building = threading.Lock()
    local = threading.local()
    torch.set_num_threads(1)
    _share_by_name()
    cuda = torch.device(device).type == "cuda"

    def model(spec: tuple) -> Any:
        with building:
            if spec not in models:
                models[spec] = _build(spec, device)
            return models[spec]

    def run(slot: int, spec: tuple, method: str, message: Any, block: torch.Tensor) -> None:
        try:
            if cuda and not hasattr(local, "stream"):
                local.stream = torch.cuda.Stream(torch.device(device))
            stream = torch.cuda.stream(local.stream) if cuda else contextlib.nullcontext()
            with stream, torch.inference_mode():
                value = _answer(model(spec), method, unpack(message, block))
                answer: tuple[bool, Any, Any] = (True, *arenas.setdefault(slot, Arena()).pack(value))
        except Exception as exc:  # noqa: BLE001 - the worker raises it
            error = exc if _picklable(exc) else VisionError(None, f"{type(exc).__name__}: {exc}")
            answer = (False, error, None)
        replies[slot].put(answer)

    with ThreadPoolExecutor(max(1, threads), thread_name_prefix="model-server") as pool:
        while (request := requests.get()) is not None:
            pool.submit(run, *request)


def _picklable(exc: BaseException) -> bool:
    import pickle

    try:
        pickle.dumps(exc)
    except Exception:  # noqa: BLE001
        return False
    return True
