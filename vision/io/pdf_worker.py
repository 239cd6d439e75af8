"""PDFs opened and rendered in a worker process with CPU-time, memory and wall-clock limits.

A hostile PDF (forms nested to draw 10^8 shapes, a page that asks PDFium for gigabytes) then costs one
worker process, never its caller: the worker runs :class:`~vision.io.pdf_backend.LocalPdf` under
``RLIMIT_AS`` and a per-call ``RLIMIT_CPU``, and the caller kills it past ``pdf_timeout_s``. A worker
holds one document at a time, so no document waits on a lock another one holds. Workers fork from a small
``forkserver`` process that has PDFium loaded (never from the caller, whose threads a fork would copy) and
go back to an idle pool after a clean close, so an ordinary PDF costs a few pipe round trips, not a process
start; a worker that timed out, died or served ``_MAX_USES`` documents is never reused.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import resource
import signal
import threading
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from vision.errors import CorruptFile, LimitExceeded, VisionError
from vision.io.page import TextLayerWord
from vision.io.pdf_backend import LocalPdf
from vision.settings import Limits

__all__ = ["PdfWorker", "set_worker_nice", "start_forkserver"]

_MAX_IDLE = 8  # idle workers kept per limit setting
_MAX_USES = 200  # documents per worker before it is replaced (bounds fragmentation and leaks)
_CONTEXT: Any = None
_LOCK = threading.Lock()
_IDLE: dict[tuple[int, ...], list[_Process]] = {}
_NICE = 0  # niceness workers add to their own (set_worker_nice)


def set_worker_nice(nice: int) -> None:
    """Start PDF workers with ``nice`` added to their niceness (the service: renders yield the CPU to its
    event loop; :mod:`vision.app.api.priority`). Idle workers started before are not reused."""
    global _NICE
    _NICE = max(0, int(nice))


def _context() -> Any:
    """The forkserver context (preloading this module), created once per process."""
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is None:
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(["vision.io.pdf_worker"])
            _CONTEXT = ctx
        return _CONTEXT


def start_forkserver() -> None:
    """Start the forkserver now (it takes a second: servers call this at start-up, not on a request)."""
    from multiprocessing import forkserver

    _context()
    forkserver.ensure_running()


def _allow_cpu(seconds: int) -> None:
    """Let the next call use ``seconds`` more CPU seconds (SIGXCPU ends the worker past them)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = int(usage.ru_utime + usage.ru_stime) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (used + seconds, resource.RLIM_INFINITY))


def _as_vision_error(exc: BaseException, name: str) -> VisionError:
    if isinstance(exc, VisionError):
        return exc
    return LimitExceeded(name, "rendering needs more memory than the PDF worker may use (pdf_memory_bytes)")


def _serve(conn: Connection, memory: int, cpu: int, nice: int = 0) -> None:
    """Worker main loop: answer ``(op, args)`` requests (``open``, ``render``, ``size``, ``has_text``,
    ``close``) until ``exit`` or EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle
    if nice > 0:
        os.nice(nice)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    pdf: LocalPdf | None = None
    name = "<pdf>"
    while True:
        try:
            op, args = conn.recv()
        except (EOFError, OSError):
            return
        if op == "exit":
            return
        _allow_cpu(cpu)
        try:
            if op == "open":
                data, name, password = args
                pdf = LocalPdf(data, name, password)
                del data
                conn.send(("ok", len(pdf)))
            elif op == "close":
                if pdf is not None:
                    pdf.close()
                pdf = None
                conn.send(("ok", None))
            elif pdf is None:
                conn.send(("error", ValueError(f"{name}: document is closed")))
            elif op == "render":
                rgb, words = pdf.render(*args)
                conn.send(("ok", (rgb.shape, words)))
                conn.send_bytes(memoryview(rgb).cast("B"))
                del rgb
            elif op == "size":
                conn.send(("ok", pdf.page_size(*args)))
            else:
                conn.send(("ok", pdf.has_text(*args)))
        except (VisionError, MemoryError) as exc:
            conn.send(("error", _as_vision_error(exc, name)))


class _Process:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, key: tuple[int, ...]) -> None:
        ctx = _context()
        self.key, self.uses, self.owner_pid = key, 0, os.getpid()
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, *key), name="vision-pdf", daemon=True)
        self.proc.start()
        child.close()

    def kill(self) -> None:
        """Stop the worker and close the pipe (only from the process that started it; idempotent)."""
        if os.getpid() != self.owner_pid:  # a forked copy of the caller: the worker is not ours
            return
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        if not self.conn.closed:
            try:
                self.conn.close()
            except OSError:
                pass


def _take(key: tuple[int, ...]) -> _Process:
    with _LOCK:
        idle = _IDLE.get(key, [])
        while idle:
            worker = idle.pop()
            if worker.proc.is_alive():
                return worker
            worker.kill()
    return _Process(key)


def _give_back(worker: _Process) -> None:
    with _LOCK:
        idle = _IDLE.setdefault(worker.key, [])
        if worker.uses < _MAX_USES and len(idle) < _MAX_IDLE:
            idle.append(worker)
            return
    worker.kill()


class PdfWorker:
    """A PDF open in a worker process; the same methods as :class:`~vision.io.pdf_backend.LocalPdf`.

    Args:
        data: a path or the file's bytes.
        name: the source name for messages.
        password: the document password, if any (sent to the worker only, never kept).
        limits: ``pdf_timeout_s``, ``pdf_cpu_s`` and ``pdf_memory_bytes`` bound the worker.

    Raises:
        LimitExceeded: a call ran past its wall-clock or CPU time, or the worker ran out of memory.
        CorruptFile, PasswordRequired, UnsupportedFormat: as the in-process reader would.
    """

    def __init__(self, data: str | bytes, name: str, password: str | None, limits: Limits) -> None:
        self.name = name
        self._timeout = limits.pdf_timeout_s
        self._cpu = limits.pdf_cpu_s
        self._lock = threading.Lock()
        self._worker: _Process | None = _take((limits.pdf_memory_bytes, limits.pdf_cpu_s, _NICE))
        self._worker.uses += 1
        with self._lock:
            self._count: int = self._call("open", (data, name, password), "opening the PDF")

    def __len__(self) -> int:
        return self._count

    def page_size(self, index: int) -> tuple[float, float]:
        with self._lock:
            return self._call("size", (index,), f"reading page {index}'s size")

    def has_text(self, index: int) -> bool:
        with self._lock:
            return self._call("has_text", (index,), f"probing page {index}'s text")

    def render(self, index: int, scale: float) -> tuple[np.ndarray, list[TextLayerWord]]:
        """Page ``index`` as RGB uint8 ``(H, W, 3)`` and its text layer, rendered by the worker."""
        with self._lock:
            shape, words = self._call("render", (index, scale), f"rendering page {index}")
            rgb = np.empty(shape, dtype=np.uint8)
            try:
                self._live().conn.recv_bytes_into(memoryview(rgb).cast("B"))
            except (EOFError, OSError):
                raise self._died(f"rendering page {index}") from None
        return rgb, words

    def _live(self) -> _Process:
        if self._worker is None:
            raise ValueError(f"{self.name}: document is closed")
        return self._worker

    def _call(self, op: str, args: tuple, what: str) -> Any:
        """Send a request and return the worker's answer, within ``pdf_timeout_s`` (killed past it)."""
        worker = self._live()
        try:
            worker.conn.send((op, args))
            answered = worker.conn.poll(self._timeout)
        except (BrokenPipeError, EOFError, OSError):
            raise self._died(what) from None
        if not answered:
            self._discard()
            raise LimitExceeded(
                self.name,
                f"{what} took longer than {self._timeout:g} s (pdf_timeout_s); the worker was stopped",
            )
        try:
            status, value = worker.conn.recv()
        except (EOFError, OSError):
            raise self._died(what) from None
        if status == "error":
            if not isinstance(value, VisionError):
                raise value
            if op == "open":  # a document that failed to open leaves the worker clean
                self._release()
            raise value
        return value

    def _died(self, what: str) -> VisionError:
        worker = self._worker
        code = None
        if worker is not None:
            worker.proc.join(5)
            code = worker.proc.exitcode
        self._discard()
        if code == -signal.SIGXCPU:
            return LimitExceeded(self.name, f"{what} used more than {self._cpu} s of CPU (pdf_cpu_s)")
        if code is not None and code < 0:
            return LimitExceeded(
                self.name,
                f"the PDF worker stopped while {what} ({signal.Signals(-code).name}): the file needs more "
                "memory than allowed (pdf_memory_bytes) or is damaged",
            )
        return CorruptFile(self.name, f"the PDF worker stopped while {what} (exit code {code})")

    def _discard(self) -> None:
        """Kill the worker: it is busy with, or broken by, this document."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.kill()

    def _release(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            _give_back(worker)

    def close(self) -> None:
        """Close the document; the worker goes back to the idle pool if it answers at once (idempotent)."""
        with self._lock:
            if self._worker is None:
                return
            try:
                self._call("close", (), "closing the PDF")
            except (VisionError, ValueError):
                return  # the worker was discarded
            self._release()

    def __del__(self) -> None:
        worker = getattr(self, "_worker", None)
        if worker is not None:  # never closed: its state is unknown, so it is not reused
            worker.kill()
