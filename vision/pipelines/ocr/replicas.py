"""Model replicas for the public API: ``ocr_predictor(replicas=N)`` reads each call's pages in N processes.

On a GPU, a page costs a few milliseconds of device time and tens of milliseconds of host time (detection
post-processing, crops, lexicon, layout, structure), so one process leaves the GPU mostly idle. Each replica
is a process (``spawn``) with its own predictor built from the same :class:`OCROptions`, on the same device,
with ``cpu_count // N`` CPU threads; a call splits its pages into N contiguous chunks, sends one to each
replica, and puts the pages back in order. :class:`~vision.pipelines.ocr.predictor.OCRPredictor` hands it
``pages_per_batch`` pages at a time, so a long document is never held whole. ``vision ocr --replicas`` does the same per file
(:mod:`vision.app.cli._ocr_engines`).

Replicas start building their models when the pool is made; the first call waits for them. A replica that
fails a chunk sends its exception back (raised by the call, the others' pages dropped); one that dies makes
the pool unusable (:class:`~vision.errors.VisionError` on every later call).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from vision.errors import VisionError

if TYPE_CHECKING:
    from vision.io.page import PageImage
    from vision.pipelines.ocr.options import OCROptions
    from vision.structures import Page

__all__ = ["ReplicaPool", "split_evenly"]


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


def _serve(conn: Any, options: OCROptions, threads: int) -> None:
    """A replica: build the predictor, then answer each list of pages with ``(True, pages)`` or
    ``(False, exception)`` until ``None`` arrives or the pipe closes."""
    import cv2
    import torch

    from vision.pipelines.ocr.predictor import ocr_predictor

    torch.set_num_threads(threads)
    cv2.setNumThreads(threads)
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


def _stop(conns: list[Any], procs: list[Any]) -> None:
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


class ReplicaPool:
    """``count`` replica processes of the predictor ``options`` describe; ``pool(pages) -> list[Page]``.

    Calls from several threads take turns (one call uses every replica). :meth:`close` (or garbage collection,
    or the interpreter's exit) stops the processes.
    """

    def __init__(self, options: OCROptions, count: int) -> None:
        if count < 1:
            raise ValueError(f"count must be positive, got {count}")
        ctx = mp.get_context("spawn")
        single = replace(options, replicas=1)
        threads = max(1, (os.cpu_count() or 2) // count)
        self._conns: list[Any] = []
        self._procs: list[Any] = []
        for _ in range(count):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, single, threads), daemon=True, name="vision-replica")
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
        self._lock = threading.Lock()
        self._broken: str | None = None
        self._finalizer = weakref.finalize(self, _stop, self._conns, self._procs)

    def __len__(self) -> int:
        return len(self._procs)

    def __call__(self, pages: list[PageImage]) -> list[Page]:
        """OCR ``pages`` across the replicas; the pages come back in input order."""
        if not pages:
            return []
        with self._lock:
            if self._broken:
                raise VisionError(None, self._broken)
            chunks = split_evenly(len(pages), len(self._conns))
            used = self._conns[: len(chunks)]
            try:
                for conn, part in zip(used, chunks):
                    conn.send(pages[part])
                answers = [conn.recv() for conn in used]
            except (EOFError, OSError) as exc:
                self._broken = f"an OCR replica process stopped ({type(exc).__name__}); make a new predictor"
                raise VisionError(None, self._broken) from exc
        out: list[Page] = []
        for (ok, value), part in zip(answers, chunks):
            if not ok:
                raise value
            out.extend(_with_inputs(pages[part], value))
        return out

    def close(self) -> None:
        """Stop the replica processes (idempotent)."""
        self._finalizer()
