"""Video OCR in several processes that share one machine (and its GPU): whole videos spread over workers.

One :class:`~vision.pipelines.video.pipeline.VideoOCR` keeps the models only as busy as one Python process can
post-process frames (detection maps to boxes, crops, decoding, layout, the timeline merge): on a GPU machine the
models then wait on the host. :class:`VideoProcessPool` starts ``processes`` workers (``spawn``), each building
its own predictor once, so host work runs on several cores while the models of all workers share the device.

Work is handed out as time segments: with fewer videos than workers a video is cut into consecutive ranges
on its sampling grid (so every segment probes exactly the frames the whole video would), each read by one
worker; the parent joins the frames of all segments and runs the timeline merge once over them, so the result
is the one a single process gives. Scene-change sampling is never cut (it compares each frame with the last one
read).

Workers are started and their predictors built (and warmed up, see :func:`warmed_ocr_predictor`) in the
constructor, so that :meth:`VideoProcessPool.run` measures only the work. A predictor that cannot be built
raises in :meth:`~VideoProcessPool.run`, like a predictor error in :class:`VideoOCR`.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing as mp
import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from vision.errors import VisionError
from vision.pipelines.video.pipeline import Predictor, VideoOCR, VideoOptions, VideoResult

__all__ = ["VideoProcessPool", "warmed_ocr_predictor"]

_WORKER: dict[str, Any] = {}


def warmed_ocr_predictor(warmup_size: tuple[int, int] | None = None, **kwargs: Any) -> Predictor:
    """``vision.ocr_predictor(**kwargs)``, run once on two blank ``warmup_size`` (H, W) frames when given, so a
    worker's first video does not pay for weight loading and kernel selection."""
    import numpy as np

    from vision.io.page import PageImage
    from vision.pipelines.ocr.predictor import ocr_predictor

    predictor = ocr_predictor(**kwargs)
    if warmup_size is not None:
        blank = np.full((*warmup_size, 3), 255, np.uint8)
        predictor([PageImage(blank, "<warm-up>", i, warmup_size, timestamp=float(i)) for i in range(2)])
    return predictor


def _init(factory: Callable[[], Predictor], config: VideoOptions, threads: int, ready: Any) -> None:
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


def _started() -> None:
    """A no-op task: submitting one per worker makes the executor start them all (see the constructor)."""


def _read(task: tuple[int, str, float | None, float | None]) -> tuple[int, VideoResult]:
    """One segment ``(video number, source, start, end)`` of a video (``None``: the configured bounds)."""
    if "error" in _WORKER:
        raise _WORKER["error"]
    number, source, start, end = task
    config = _WORKER["config"]
    if (start, end) != (config.start, config.end):
        config = dataclasses.replace(config, start=start, end=end)
    (result,) = VideoOCR(_WORKER["predictor"], config).run([source])
    if result.error is not None:  # an exception that cannot be unpickled would stall the pool: keep its text
        try:
            pickle.loads(pickle.dumps(result.error))
        except Exception:  # noqa: BLE001 - any pickling failure
            result.error = VisionError(None, result.message)
    if result.document is not None:
        for page in result.document.pages:
            page.image = None  # frames stay in the worker
    return number, result


class VideoProcessPool:
    """``processes`` workers, each with its own predictor from ``factory`` (a picklable zero-argument callable,
    e.g. ``functools.partial(warmed_ocr_predictor, device="cuda")``), reading whole videos with ``config``.

    Use as a context manager (or call :meth:`close`). ``threads``: CPU threads per worker (default: the cores
    divided among the workers).
    """

    def __init__(self, factory: Callable[[], Predictor], config: VideoOptions = VideoOptions(), *,
                 processes: int = 2, threads: int | None = None, start_timeout: float = 900.0) -> None:
        if processes < 1:
            raise ValueError(f"processes must be >= 1, got {processes}")
        ctx = mp.get_context("spawn")  # CUDA cannot be used in forked children
        ready = ctx.Barrier(processes + 1)
        threads = threads or max(1, (os.cpu_count() or 1) // processes)
        self.processes, self.config = processes, config
        # A process executor, not multiprocessing.Pool: a worker that dies (a crash in a decoder) breaks the
        # executor and raises in run() instead of leaving its task pending forever.
        self._pool = ProcessPoolExecutor(processes, mp_context=ctx, initializer=_init,
                                         initargs=(factory, config, threads, ready))
        try:
            started = [self._pool.submit(_started) for _ in range(processes)]  # spawned on demand, one each
            ready.wait(timeout=start_timeout)
            for future in started:
                future.result(timeout=start_timeout)
        except BaseException:
            self._pool.shutdown(wait=False, cancel_futures=True)
            raise

    def run(self, sources: Iterable[str | os.PathLike]) -> Iterator[VideoResult]:
        """One :class:`VideoResult` per video, as each completes (a video that fails to decode carries its error;
        predictor errors propagate; a worker that dies raises :class:`RuntimeError`)."""
        names = [os.fspath(s) for s in sources]
        parts = max(1, math.ceil(self.processes / max(1, len(names))))
        tasks = [(i, name, *span) for i, name in enumerate(names) for span in _segments(name, self.config, parts)]
        todo = [sum(t[0] == i for t in tasks) for i in range(len(names))]  # segments per video (a name may repeat)
        done: dict[int, list[VideoResult]] = {i: [] for i in range(len(names))}
        futures = [self._pool.submit(_read, task) for task in tasks]
        try:
            for future in as_completed(futures):
                number, result = future.result()
                done[number].append(result)
                if len(done[number]) == todo[number]:
                    yield _join(names[number], done.pop(number), self.config)
        except BrokenProcessPool as exc:
            unfinished = sorted({names[i] for i in done})
            raise RuntimeError(f"a video OCR worker process died; unfinished: {', '.join(unfinished)}") from exc
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        """Stop the workers."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> VideoProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _segments(source: str, config: VideoOptions, parts: int) -> list[tuple[float | None, float | None]]:
    """Up to ``parts`` consecutive ``[start, end)`` ranges of the video on its sampling grid; the configured
    range alone when it cannot or need not be cut (one part, scene change, a video that does not open: its
    worker then reports the error)."""
    whole = [(config.start, config.end)]
    if parts <= 1 or config.scene_change:
        return whole
    from vision.io import DocumentFile

    try:
        video = DocumentFile.from_video(source, fps=config.fps, start=config.start, end=config.end,
                                        limits=config.limits)
        first, count = float(video.start), len(video)
        video.close()
    except Exception:  # noqa: BLE001 - the worker reads it again and reports the error with the video's name
        return whole
    per = math.ceil(count / parts)
    if count < 2 or per >= count:
        return whole
    bounds = [first + k * per / config.fps for k in range(math.ceil(count / per))]
    return [(b, bounds[i + 1] if i + 1 < len(bounds) else config.end) for i, b in enumerate(bounds)]


def _join(source: str, results: list[VideoResult], config: VideoOptions) -> VideoResult:
    """One video's result from its segments: the first error, or every frame merged into one timeline."""
    from vision.pipelines.video.timeline import video_document

    frames = sum(r.frames for r in results)
    failed = [r for r in results if r.error is not None]
    if failed:
        return VideoResult(source, None, failed[0].error, frames)
    if len(results) == 1:
        return results[0]
    pages = [page for r in results for page in r.document.pages]  # type: ignore[union-attr]
    pages.sort(key=lambda p: p.timestamp)
    for i, page in enumerate(pages):
        page.page_idx = i
    ends = [r.end for r in results if r.end is not None]
    samples = sum(r.samples or 0 for r in results)
    doc = video_document(pages, source=source, end=max(ends) if ends else None, samples=samples,
                         interval=config.interval, config=config.timeline)
    return VideoResult(source, doc, None, frames, max(ends) if ends else None, samples)
