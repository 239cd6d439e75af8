"""The OCR models in a process of their own, so the server's event loop never waits on them for the GIL.

The pipeline around the models (box decoding, cropping, layout, structure) is Python: run on a thread of the
server process, it holds the GIL most of the time the batcher is busy, and a thread that wants the GIL
waits until the holder drops it, which a holder starved of CPU on a loaded machine may not do for hundreds
of milliseconds. Measured under ``benchmarks/attack.py``, the event loop then lagged up to 1.9 s while
using 2-90 ms of CPU itself: waiting, not working. :class:`ModelProcess` runs the predictor in a child
process started with ``spawn`` (no copy of the server's threads) and niced like the other OCR work; the
server sends it pages (their images as raw bytes, written with the GIL released) and gets pages back over a
pipe, one batch at a time (the batcher already serialises model calls). :class:`RemotePredictor` is the predictor-shaped handle the batcher calls; its ``with_lang``
and ``with_options`` name option sets the child builds (sharing its models) on first use.

A child that dies (killed, out of memory) fails the batch it was running with :class:`ModelProcessDied`
and is started again for the next one.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import threading
from collections.abc import Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from vision.io.page import PageImage
from vision.pipelines.ocr.options import OCROptions, options_with
from vision.structures import Document, Page

__all__ = ["ModelProcess", "ModelProcessDied", "RemotePredictor"]

log = logging.getLogger(__name__)

_MAX_VARIANTS = 32
Key = tuple[tuple[str, ...], tuple[tuple[str, bool], ...]]
_NO_IMAGE = np.zeros((0, 0, 3), np.uint8)  # stands for the image in the pickled page fields


class ModelProcessDied(RuntimeError):
    """The model process ended while it ran a batch (it is started again for the next one)."""


def _variant(base: Any, variants: dict[Key, Any], key: Key) -> Any:
    predictor = variants.get(key)
    if predictor is None:
        codes, changes = key
        predictor = base.with_lang("+".join(codes)) if codes else base
        if changes:
            predictor = predictor.with_options(**dict(changes))
        if len(variants) >= _MAX_VARIANTS:
            variants.pop(next(k for k in variants if k != ((), ())))
        variants[key] = predictor
    return predictor


def _serve(conn: Connection, options: OCROptions, torch_threads: int | None, nice: int) -> None:
    """Child main: build the predictor, then answer ``("ocr", key, pages)`` until ``("exit",)`` or EOF."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    if nice > 0:
        os.nice(nice)
    import torch

    from vision.pipelines.ocr.predictor import ocr_predictor

    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    try:
        base = ocr_predictor(options=options)
    except BaseException as exc:  # noqa: BLE001 (reported to the server, which raises it)
        conn.send(("error", _portable(exc)))
        return
    conn.send(("ready", None))
    variants: dict[Key, Any] = {((), ()): base}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] == "exit":
            return
        _, key, metas, shapes = message
        pages = [_receive_page(conn, meta, shape) for meta, shape in zip(metas, shapes)]
        try:
            doc = _variant(base, variants, key)(pages)
            for page, image in zip(doc.pages, pages):
                if page.image is image.image:
                    page.image = None  # the server holds it already
            conn.send(("ok", doc.pages))
        except Exception as exc:  # noqa: BLE001 (the batch fails in the server, the process goes on)
            conn.send(("error", _portable(exc)))


def _send_pages(conn: Connection, key: Key, pages: Sequence[PageImage]) -> None:
    """The pages' fields pickled (small), then each image's bytes as they are: ``send_bytes`` writes from
    the array's memory with the GIL released, where pickling would copy it holding the GIL (measured: the
    batcher thread then held the GIL 55 % of the time, and the event loop waited)."""
    images = [np.ascontiguousarray(page.image) for page in pages]
    metas = [replace(page, image=_NO_IMAGE) for page in pages]
    conn.send(("ocr", key, metas, [(im.shape, im.dtype.str) for im in images]))
    for image in images:
        conn.send_bytes(memoryview(image).cast("B") if image.size else b"")


def _receive_page(conn: Connection, meta: PageImage, shape: tuple[tuple[int, ...], str]) -> PageImage:
    dims, dtype = shape
    image = np.empty(dims, dtype=np.dtype(dtype))
    if image.size:
        conn.recv_bytes_into(memoryview(image).cast("B"))
    else:
        conn.recv_bytes()
    return replace(meta, image=image)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling (``VisionError`` does), else a ``RuntimeError`` with its text."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class ModelProcess:
    """The OCR predictor ``options`` describe, in a child process (see the module docstring).

    Args:
        options: what the child builds (:func:`vision.ocr_predictor`).
        torch_threads: the child's intra-op threads (``None``: torch's default).
        nice: niceness the child adds to its own (:mod:`vision.app.api.priority`).
        start_timeout_s: longest wait for the models to load.

    Raises:
        Exception: what building the predictor raised in the child (``WeightsError``, ``ValueError``, ...).
    """

    def __init__(
        self, options: OCROptions, *, torch_threads: int | None = None, nice: int = 0, start_timeout_s: float = 600
    ) -> None:
        self.options, self._args = options, (options, torch_threads, nice)
        self._timeout = start_timeout_s
        self._lock = threading.Lock()
        self._closed = False
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, *self._args), name="vision-ocr-models", daemon=True)
        self._proc.start()
        child.close()
        if not self._conn.poll(self._timeout):
            self._kill()
            raise TimeoutError(f"the OCR model process did not start within {self._timeout:g} s")
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError) as exc:
            self._kill()
            raise ModelProcessDied(f"the OCR model process ended while loading (exit code {self._proc.exitcode})") from exc
        if kind == "error":
            self._kill()
            raise value

    @property
    def pid(self) -> int | None:
        return self._proc.pid

    @property
    def alive(self) -> bool:
        return not self._closed and self._proc.is_alive()

    def run(self, key: Key, pages: Sequence[PageImage]) -> list[Page]:
        """OCR ``pages`` with the option set ``key`` (one call at a time); the pages, in order."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the OCR model process is closed")
            if not self._proc.is_alive():
                self._restart()
            try:
                _send_pages(self._conn, key, pages)
                kind, value = self._conn.recv()
            except (EOFError, OSError, BrokenPipeError) as exc:
                code = self._proc.exitcode
                self._restart()
                raise ModelProcessDied(
                    f"the OCR model process ended during a batch (exit code {code}); it was started again"
                ) from exc
        if kind == "error":
            raise value
        return value

    def _restart(self) -> None:
        log.warning("the OCR model process ended (exit code %s): starting it again", self._proc.exitcode)
        self._kill()
        self._start()

    def _kill(self) -> None:
        self._conn.close()
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join(10)

    def close(self) -> None:
        """Stop the child (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._conn.send(("exit",))
            except OSError:
                pass
            self._proc.join(10)
            self._kill()


class RemotePredictor:
    """``predictor(pages) -> Document`` answered by a :class:`ModelProcess`, with ``with_lang`` and
    ``with_options`` as :class:`~vision.pipelines.ocr.predictor.OCRPredictor` has them (the option sets are
    built in the child, sharing its models)."""

    def __init__(self, process: ModelProcess, options: OCROptions | None = None, key: Key = ((), ())) -> None:
        self.process, self.options, self.key = process, options or process.options, key

    def __call__(self, pages: Any) -> Document:
        items = [pages] if isinstance(pages, PageImage) else list(pages)
        return Document(pages=self.process.run(self.key, items), source=getattr(pages, "source", None))

    def with_lang(self, lang: str | None) -> RemotePredictor:
        from vision.predictors.recognition.languages import parse_lang

        codes = parse_lang(lang)
        if codes == parse_lang(self.options.lang):
            return self
        return RemotePredictor(self.process, replace(self.options, lang=lang), (codes, self.key[1]))

    def with_options(self, **changes: Any) -> RemotePredictor:
        from vision.pipelines.ocr.predictor import PER_CALL_OPTIONS

        unknown = sorted(changes.keys() - PER_CALL_OPTIONS)
        if unknown:
            raise TypeError(f"{', '.join(unknown)} cannot change per call")
        options = options_with(self.options, **changes)
        if options == self.options:
            return self
        base = self.process.options
        merged = {k: getattr(options, k) for k in sorted(PER_CALL_OPTIONS) if getattr(options, k) != getattr(base, k)}
        return RemotePredictor(self.process, options, (self.key[0], tuple(merged.items())))

    def close(self) -> None:
        self.process.close()

