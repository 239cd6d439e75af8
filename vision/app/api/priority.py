"""Scheduling inside the service: the event loop thread runs first, OCR work yields the CPU to it.

The event loop answers ``/healthz`` and ``/readyz``, accepts connections and parses every request; OCR
work (the batcher thread, request threads decoding and exporting, job workers, PDF rendering processes)
can keep every core busy for minutes. On Linux each thread is a task with its own nice value, so
:func:`background_thread` raises the calling thread's niceness by ``ServiceSettings.worker_nice``
(raising it needs no privilege) and the PDF worker processes are started with the same niceness
(:func:`vision.io.pdf_worker.set_worker_nice`). When the loop thread wakes up, the kernel then runs it
ahead of the niced work, whatever the load; on an idle machine nothing changes. The loop thread itself is
never niced (the call is a no-op on a thread running an event loop).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

__all__ = ["background_thread"]

_state = threading.local()


def background_thread(nice: int) -> None:
    """Raise the calling thread's niceness by ``nice`` (once per thread; at most 19). A no-op on a thread
    running an event loop, for ``nice <= 0``, and where threads have no nice value of their own."""
    if nice <= 0 or getattr(_state, "nice", 0) >= nice:
        return
    try:
        asyncio.get_running_loop()
        return  # the event loop's own thread: never
    except RuntimeError:
        pass
    _state.nice = nice
    if not sys.platform.startswith("linux"):  # elsewhere PRIO_PROCESS takes a process id, not a thread's
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:  # not allowed (a seccomp profile)
        pass
