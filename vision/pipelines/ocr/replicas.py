"""Model replicas for the public API: ``ocr_predictor(replicas=N)`` reads pages in N processes.

On a GPU, a page costs a few milliseconds of device time and tens of milliseconds of host time (detection
post-processing, crops, lexicon, layout, structure), so one process leaves the GPU mostly idle. Each replica
is a process (``spawn``) with its own predictor built from the same :class:`OCROptions`, on the same device,
with ``cpu_count // N`` CPU threads. The pool is a work queue: a call splits its pages into at most N
contiguous chunks, each chunk goes to the next idle replica (one feeder thread per replica hands them out),
and the pages come back in order. Calls from several threads share the replicas chunk by chunk, so the
service's batcher threads (:mod:`vision.app.api.runtime`) and a long document's next batch
(:class:`~vision.pipelines.ocr.predictor.OCRPredictor`) keep every replica busy. ``vision ocr --replicas``
does the same per file (:mod:`vision.app.cli._ocr_engines`).

With ``OCROptions.model_server`` the replicas' models run in one model server process on their device
(:mod:`vision.predictors.remote`: one CUDA context instead of N), and the replicas do all other work.

Replicas start building their models when the pool is made; the first call waits for them. A replica that
fails a chunk sends its exception back (raised by the call, the others' pages dropped); one that dies makes
the pool unusable (:class:`~vision.errors.VisionError` on that call and every later one, never a hang).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import threading
import weakref
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from vision.errors import VisionError

if TYPE_CHECKING:
    from vision.io.page import PageImage
    from vision.pipelines.ocr.options import OCROptions
    from vision.structures import Page

__all__ = ["GPU_BYTES_PER_REPLICA", "ReplicaPool", "device_replicas", "gather", "replica_options",
           "split_evenly"]

GPU_BYTES_PER_REPLICA = 6 * 1024**3
"""GPU memory set aside per automatic replica (CUDA context, both models, a 16-page detector batch)."""


def device_replicas(device: str | None, most: int | None = None) -> int:
    """Replicas worth starting on ``device`` (``None``: CUDA when available): on a CUDA device, 3/4 of the
    cores, as many as its free memory holds (:data:`GPU_BYTES_PER_REPLICA` each) and at most ``most``;
    elsewhere 1 (on a CPU the models already use every core). The free memory comes from ``nvidia-smi``
    when it can tell (:mod:`~vision.pipelines.ocr.gpu_memory`: no torch import, no CUDA context in the
    calling process), else from torch."""
    from vision.pipelines.ocr.gpu_memory import free_bytes

    if device is not None and not device.startswith("cuda"):
        return 1
    free = free_bytes(device)
    if free is None:
        import torch

        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if not device.startswith("cuda") or not torch.cuda.is_available():
            return 1
        index = torch.device(device).index
        free, _ = torch.cuda.mem_get_info(index if index is not None else torch.cuda.current_device())
    if free == 0:
        return 1
    cores = (os.cpu_count() or 2) * 3 // 4
    return max(1, min(cores, free // GPU_BYTES_PER_REPLICA, most if most is not None else cores))


def split_evenly(count: int, parts: int) -> list[slice]:
    """``parts`` contiguous slices of ``range(count)`` whose lengths differ by at most one (none empty when
    ``count >= parts``; fewer slices when ``count < parts``)."""
    parts = max(1, min(parts, count))
    base, extra = divmod(count, parts)
    out, start = [], 0
    for k in range(parts):
        stop = start + base + (k < extra)
        out.append(slice(start, stop))
        start = stop
    return out


def replica_options(options: OCROptions) -> OCROptions:
    """What each replica builds: ``options`` for one process, eager unless ``cuda_graphs`` is set (CUDA
    graphs made 12 processes sharing one GPU slower: ``docs/benchmarks.md``), or left to a model server."""
    shared = options.cuda_graphs is None and not options.model_server
    return replace(options, replicas=1, cuda_graphs=False if shared else options.cuda_graphs)


def _serve(conn: Any, options: OCROptions, threads: int, client: Any = None) -> None:
    """A replica: build the predictor (its models in a model server with ``client``), then answer each list of
    pages with ``(True, pages)`` or ``(False, exception)`` until ``None`` arrives or the pipe closes."""
    import cv2
    import torch

    from vision.pipelines.ocr.predictor import ocr_predictor

    torch.set_num_threads(threads)
    cv2.setNumThreads(threads)
    if client is not None:
        from vision.predictors.remote import install

        install(client)
    try:
        predictor: Any = ocr_predictor(options=options)
    except Exception as exc:  # noqa: BLE001 - every call then fails with the build error
        predictor = exc
    while True:
        try:
            pages = conn.recv()
        except (EOFError, OSError):
            return
        if pages is None:
            return
        try:
            if isinstance(predictor, Exception):
                raise predictor
            answer: tuple[bool, Any] = (True, _without_inputs(pages, predictor(pages).pages))
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            answer = (False, exc)
        try:
            conn.send(answer)
        except (BrokenPipeError, OSError):  # the caller is gone
            return


def _without_inputs(inputs: list[PageImage], pages: list[Page]) -> tuple[list[Page], list[bool]]:
    """``pages`` with ``image`` set to ``None`` where it is the input page's own array, and which ones (the
    caller has those arrays: :func:`_with_inputs` puts them back), so a page's pixels cross the pipe once."""
    same = [page.image is not None and page.image is getattr(given, "image", None)
            for given, page in zip(inputs, pages)]
    for page, dropped in zip(pages, same):
        if dropped:
            page.image = None
    return pages, same


def _with_inputs(inputs: list[PageImage], answer: tuple[list[Page], list[bool]]) -> list[Page]:
    """Undo :func:`_without_inputs` on the caller's side."""
    pages, same = answer
    for given, page, dropped in zip(inputs, pages, same):
        if dropped:
            page.image = given.image
    return pages


class _State:
    """What the feeder threads share with the pool (not the pool itself, so it can be collected)."""

    def __init__(self) -> None:
        self.broken: str | None = None
        self.lock = threading.Lock()


def _fail_pending(jobs: queue.SimpleQueue, error: BaseException) -> None:
    """Fail every chunk still queued (the stop markers stay for the feeders)."""
    kept = 0
    while True:
        try:
            job = jobs.get_nowait()
        except queue.Empty:
            break
        if job is None:
            kept += 1
        elif job[1].set_running_or_notify_cancel():
            job[1].set_exception(error)
    for _ in range(kept):
        jobs.put(None)


def _feed(conn: Any, jobs: queue.SimpleQueue, state: _State) -> None:
    """A feeder thread: hand its replica the next queued chunk, wait for the answer, resolve the chunk's
    future; stop at ``None``. A broken pipe marks the pool broken and fails what is queued."""
    while True:
        job = jobs.get()
        if job is None:
            return
        pages, future = job
        if not future.set_running_or_notify_cancel():
            continue
        if state.broken:
            future.set_exception(VisionError(None, state.broken))
            continue
        try:
            conn.send(pages)
            ok, value = conn.recv()
        except (EOFError, OSError) as exc:
            with state.lock:
                state.broken = state.broken or (
                    f"an OCR replica process stopped ({type(exc).__name__}); make a new predictor")
            error = VisionError(None, state.broken)
            future.set_exception(error)
            _fail_pending(jobs, error)
            return
        if ok:
            future.set_result(_with_inputs(pages, value))
        else:
            future.set_exception(value)


def _model_server(options: OCROptions, count: int) -> Any:
    """With ``options.model_server``: the model server of ``count`` replicas, on their device."""
    if not options.model_server:
        return None
    from vision.predictors._device import pick_device
    from vision.predictors.remote import ModelServer

    return ModelServer(str(pick_device(options.device)), count)


def _stop(jobs: queue.SimpleQueue, feeders: list[threading.Thread], conns: list[Any], procs: list[Any],
          server: Any = None) -> None:
    for _ in feeders:
        jobs.put(None)
    for thread in feeders:
        thread.join(timeout=10)
    for conn in conns:
        try:
            conn.send(None)
            conn.close()
        except OSError:
            pass
    for proc in procs:
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
    if server is not None:
        server.close()


class ReplicaPool:
    """``count`` replica processes of the predictor ``options`` describe; ``pool(pages) -> list[Page]``.

    Thread-safe: concurrent calls queue their chunks and each idle replica takes the oldest one.
    :meth:`close` (or garbage collection, or the interpreter's exit) stops the processes.
    """

    def __init__(self, options: OCROptions, count: int) -> None:
        if count < 1:
            raise ValueError(f"count must be positive, got {count}")
        ctx = mp.get_context("spawn")
        single = replica_options(options)
        threads = max(1, (os.cpu_count() or 2) // count)
        self._conns: list[Any] = []
        self._procs: list[Any] = []
        self._server = _model_server(options, count)
        for k in range(count):
            parent, child = ctx.Pipe()
            client = self._server.client(k) if self._server is not None else None
            proc = ctx.Process(target=_serve, args=(child, single, threads, client), daemon=True,
                               name="vision-replica")
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._state = _State()
        self._feeders = [threading.Thread(target=_feed, args=(conn, self._jobs, self._state), daemon=True,
                                          name="vision-replica-feeder") for conn in self._conns]
        for thread in self._feeders:
            thread.start()
        self._finalizer = weakref.finalize(self, _stop, self._jobs, self._feeders, self._conns, self._procs,
                                           self._server)

    def __len__(self) -> int:
        return len(self._procs)

    def submit(self, pages: list[PageImage]) -> list[Future]:
        """Queue ``pages`` as at most ``len(self)`` contiguous chunks; one future per chunk, in order, each
        resolving to that chunk's pages.

        Raises:
            VisionError: a replica died (the pool is unusable), or the pool is closed.
        """
        if self._state.broken:
            raise VisionError(None, self._state.broken)
        if not self._finalizer.alive:
            raise VisionError(None, "the OCR replica pool is closed")
        futures = []
        for part in split_evenly(len(pages), len(self._procs)) if pages else []:
            future: Future = Future()
            self._jobs.put((pages[part], future))
            futures.append(future)
        return futures

    def __call__(self, pages: list[PageImage]) -> list[Page]:
        """OCR ``pages`` across the replicas; the pages come back in input order."""
        return gather(self.submit(pages))

    def close(self) -> None:
        """Stop the replica processes (idempotent)."""
        self._finalizer()


def gather(futures: list[Future]) -> list[Page]:
    """The pages of :meth:`ReplicaPool.submit`'s futures, in order (a failed chunk raises its error once
    every chunk is back, so no replica is still reading for a call that has returned)."""
    errors = [f.exception() for f in futures]
    for error in errors:
        if error is not None:
            raise error
    return [page for f in futures for page in f.result()]
