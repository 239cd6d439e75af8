"""PDFs opened and rendered in a child process with CPU-time, memory and wall-clock limits.

A hostile PDF (forms nested to draw 10^8 shapes, a page that asks PDFium for gigabytes) then costs one
worker process, never its caller: the worker runs :class:`~vision.io.pdf_backend.LocalPdf` under
``RLIMIT_AS`` and a per-call ``RLIMIT_CPU``, and the caller kills it past ``pdf_timeout_s``. Each document
gets its own worker, forked from a small ``forkserver`` process that has PDFium loaded, so workers start in
milliseconds, never hold a lock another document waits on, and fork no threads of the caller.
"""

from __future__ import annotations

import multiprocessing as mp
import resource
import signal
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from vision.errors import CorruptFile, LimitExceeded, VisionError
from vision.io.page import TextLayerWord
from vision.io.pdf_backend import LocalPdf
from vision.settings import Limits

__all__ = ["PdfWorker", "start_forkserver"]

_CONTEXT: Any = None
_CONTEXT_LOCK = threading.Lock()


def _context() -> Any:
    """The forkserver context (preloading this module), created once per process."""
    global _CONTEXT
    with _CONTEXT_LOCK:
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


def _serve(conn: Connection, data: str | bytes, name: str, password: str | None, memory: int, cpu: int) -> None:
    """Worker main loop: open the PDF, then answer ``(op, args)`` requests until ``close`` or EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        _allow_cpu(cpu)
        pdf = LocalPdf(data, name, password)
        del data
        conn.send(("ok", len(pdf)))
    except (VisionError, MemoryError) as exc:
        conn.send(("error", _as_vision_error(exc, name)))
        return
    while True:
        try:
            op, args = conn.recv()
        except (EOFError, OSError):
            return
        if op == "close":
            return
        _allow_cpu(cpu)
        try:
            if op == "render":
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


def _as_vision_error(exc: BaseException, name: str) -> VisionError:
    if isinstance(exc, VisionError):
        return exc
    return LimitExceeded(name, "rendering needs more memory than the PDF worker may use (pdf_memory_bytes)")


class PdfWorker:
    """A PDF open in a worker process; the same methods as :class:`~vision.io.pdf_backend.LocalPdf`.

    Args:
        data: a path or the file's bytes.
        name: the source name for messages.
        password: the document password, if any (sent to the worker only).
        limits: ``pdf_timeout_s``, ``pdf_cpu_s`` and ``pdf_memory_bytes`` bound the worker.

    Raises:
        LimitExceeded: a call ran past its wall-clock or CPU time, or the worker ran out of memory.
        CorruptFile, PasswordRequired, UnsupportedFormat: as the in-process reader would.
    """

    def __init__(self, data: str | bytes, name: str, password: str | None, limits: Limits) -> None:
        ctx = _context()
        self.name = name
        self._timeout = limits.pdf_timeout_s
        self._cpu = limits.pdf_cpu_s
        self._lock = threading.Lock()
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(
            target=_serve,
            args=(child, data, name, password, limits.pdf_memory_bytes, limits.pdf_cpu_s),
            name="vision-pdf",
            daemon=True,
        )
        self._proc.start()
        child.close()
        with self._lock:
            self._count: int = self._reply("opening the PDF")

    def __len__(self) -> int:
        return self._count

    def page_size(self, index: int) -> tuple[float, float]:
        return self._call("size", (index,), f"reading page {index}'s size")

    def has_text(self, index: int) -> bool:
        return self._call("has_text", (index,), f"probing page {index}'s text")

    def render(self, index: int, scale: float) -> tuple[np.ndarray, list[TextLayerWord]]:
        """Page ``index`` as RGB uint8 ``(H, W, 3)`` and its text layer, rendered by the worker."""
        with self._lock:
            self._send("render", (index, scale))
            shape, words = self._reply(f"rendering page {index}")
            rgb = np.empty(shape, dtype=np.uint8)
            try:
                self._conn.recv_bytes_into(memoryview(rgb).cast("B"))
            except (EOFError, OSError):
                raise self._died(f"rendering page {index}") from None
        return rgb, words

    def _call(self, op: str, args: tuple, what: str) -> Any:
        with self._lock:
            self._send(op, args)
            return self._reply(what)

    def _send(self, op: str, args: tuple) -> None:
        if self._conn.closed:
            raise ValueError(f"{self.name}: document is closed")
        try:
            self._conn.send((op, args))
        except (BrokenPipeError, OSError):
            raise self._died(op) from None

    def _reply(self, what: str) -> Any:
        """The worker's answer, within ``pdf_timeout_s`` (the worker is killed past it)."""
        if not self._conn.poll(self._timeout):
            self._stop()
            raise LimitExceeded(
                self.name, f"{what} took longer than {self._timeout:g} s (pdf_timeout_s); the worker was stopped"
            )
        try:
            status, value = self._conn.recv()
        except (EOFError, OSError):
            raise self._died(what) from None
        if status == "error":
            raise value
        return value

    def _died(self, what: str) -> VisionError:
        self._proc.join(5)
        code = self._proc.exitcode
        self._stop()
        if code == -signal.SIGXCPU:
            return LimitExceeded(self.name, f"{what} used more than {self._cpu} s of CPU (pdf_cpu_s)")
        if code is not None and code < 0:
            return LimitExceeded(
                self.name,
                f"the PDF worker stopped while {what} ({signal.Signals(-code).name}): the file needs more "
                "memory than allowed (pdf_memory_bytes) or is damaged",
            )
        return CorruptFile(self.name, f"the PDF worker stopped while {what} (exit code {code})")

    def _stop(self) -> None:
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join(5)
        self._conn.close()

    def close(self) -> None:
        """Ask the worker to exit (killed if it does not within a second); idempotent."""
        with self._lock:
            if self._conn.closed:
                return
            try:
                self._conn.send(("close", ()))
            except OSError:
                pass
            deadline = time.monotonic() + 1.0
            self._proc.join(max(0.0, deadline - time.monotonic()))
            self._stop()

    def __del__(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.is_alive():
            proc.kill()
