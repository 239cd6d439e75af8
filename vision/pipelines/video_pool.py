"""Video OCR in several processes that share one machine (and its GPU): whole videos spread over workers.

One :class:`~vision.pipelines.video.VideoOCR` keeps the models only as busy as one Python process can
post-process frames (detection maps to boxes, crops, decoding, layout, the timeline merge): on a GPU machine the
models then wait on the host. :class:`VideoProcessPool` starts ``processes`` workers (``spawn``), each building
its own predictor once, and gives each a whole video at a time, so host work runs on several cores while the
models of all workers share the device.

Workers are started and their predictors built (and warmed up, see :func:`build_ocr_predictor`) in the
constructor, so that :meth:`VideoProcessPool.run` measures only the work. A predictor that cannot be built
raises in :meth:`~VideoProcessPool.run`, like a predictor error in :class:`VideoOCR`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from vision.errors import VisionError
from vision.pipelines.video import Predictor, VideoOCR, VideoOCRConfig, VideoResult

__all__ = ["VideoProcessPool", "build_ocr_predictor"]

_WORKER: dict[str, Any] = {}


def build_ocr_predictor(warmup_size: tuple[int, int] | None = None, **kwargs: Any) -> Predictor:
    """``vision.ocr_predictor(**kwargs)``, run once on two blank ``warmup_size`` (H, W) frames when given, so a
    worker's first video does not pay for weight loading and kernel selection."""
    import numpy as np

    from vision.io.page import PageImage
    from vision.pipelines.ocr import ocr_predictor

    predictor = ocr_predictor(**kwargs)
    if warmup_size is not None:
        blank = np.full((*warmup_size, 3), 255, np.uint8)
        predictor([PageImage(blank, "<warm-up>", i, warmup_size, timestamp=float(i)) for i in range(2)])
    return predictor


def _init(factory: Callable[[], Predictor], config: VideoOCRConfig, threads: int, ready: Any) -> None:
    """Worker start: bound the CPU threads, build the predictor (keeping a failure to raise per task)."""
    import cv2
    import torch

    torch.set_num_threads(threads)
    cv2.setNumThreads(threads)
    _WORKER["config"] = config
    try:
        _WORKER["predictor"] = factory()
    except Exception as exc:  # noqa: BLE001 - reported by every task instead of a respawn loop
        _WORKER["error"] = exc
    ready.wait()


def _read(source: str) -> VideoResult:
    if "error" in _WORKER:
        raise _WORKER["error"]
    (result,) = VideoOCR(_WORKER["predictor"], _WORKER["config"]).run([source])
    if result.error is not None:  # an exception that cannot be unpickled would stall the pool: keep its text
        try:
            pickle.loads(pickle.dumps(result.error))
        except Exception:  # noqa: BLE001 - any pickling failure
            result.error = VisionError(None, result.message)
    if result.document is not None:
        for page in result.document.pages:
            page.image = None  # frames stay in the worker
    return result


class VideoProcessPool:
    """``processes`` workers, each with its own predictor from ``factory`` (a picklable zero-argument callable,
    e.g. ``functools.partial(build_ocr_predictor, device="cuda")``), reading whole videos with ``config``.

    Use as a context manager (or call :meth:`close`). ``threads``: CPU threads per worker (default: the cores
    divided among the workers).
    """

    def __init__(self, factory: Callable[[], Predictor], config: VideoOCRConfig = VideoOCRConfig(), *,
                 processes: int = 2, threads: int | None = None, start_timeout: float = 900.0) -> None:
        if processes < 1:
            raise ValueError(f"processes must be >= 1, got {processes}")
        ctx = mp.get_context("spawn")  # CUDA cannot be used in forked children
        ready = ctx.Barrier(processes + 1)
        threads = threads or max(1, (os.cpu_count() or 1) // processes)
        self.processes = processes
        self._pool = ctx.Pool(processes, initializer=_init, initargs=(factory, config, threads, ready))
        try:
            ready.wait(timeout=start_timeout)
        except BaseException:
            self._pool.terminate()
            raise

    def run(self, sources: Iterable[str | os.PathLike]) -> Iterator[VideoResult]:
        """One :class:`VideoResult` per video, as each completes (a video that fails to decode carries its error;
        predictor errors propagate)."""
        yield from self._pool.imap_unordered(_read, [os.fspath(s) for s in sources], chunksize=1)

    def close(self) -> None:
        """Stop the workers."""
        self._pool.close()
        self._pool.join()

    def __enter__(self) -> VideoProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            self._pool.terminate()
        self.close()
