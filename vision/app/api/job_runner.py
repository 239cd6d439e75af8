"""Background threads that run persisted jobs, keep their heartbeats fresh and recover orphans.

The runner is generic: a ``handler(job, ctx)`` does the work and calls ``ctx.checkpoint(done, total)``
between chunks; the checkpoint records progress and raises :class:`JobInterrupted` when the job was
cancelled or the server is stopping. A job released at shutdown goes back to the queue and resumes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from vision.app.api.errors import vision_error_status
from vision.app.api.job_store import JobRecord, JobStore, new_owner
from vision.errors import VisionError

__all__ = ["JobContext", "JobHandler", "JobInterrupted", "JobRunner"]

log = logging.getLogger(__name__)


class JobInterrupted(Exception):
    """Raised at a checkpoint: the job was cancelled (``shutdown=False``) or the server is stopping."""

    def __init__(self, *, shutdown: bool) -> None:
        super().__init__("server stopping" if shutdown else "job cancelled")
        self.shutdown = shutdown


class JobContext:
    """What a handler may do with its job besides computing: checkpoint progress, and see cancellation."""

    def __init__(self, store: JobStore, job: JobRecord, owner: str, stopping: threading.Event) -> None:
        self.store = store
        self.job = job
        self._owner = owner
        self._stopping = stopping

    def checkpoint(self, done: int, total: int | None) -> None:
        """Record ``done`` of ``total`` units; raise :class:`JobInterrupted` if the job should stop now."""
        if not self.store.progress(self.job.id, self._owner, done, total):
            raise JobInterrupted(shutdown=False)
        if self._stopping.is_set():
            raise JobInterrupted(shutdown=True)


JobHandler = Callable[[JobRecord, JobContext], None]


class JobRunner:
    """``workers`` threads taking queued jobs from ``store`` and running ``handler`` on each.

    Args:
        store: the persistent job store (may be shared with other processes).
        handler: does one job's work; returns normally on success, raises on failure.
        workers: jobs run at the same time by this process.
        max_attempts: starts allowed before an interrupted job is marked failed.
        stale_after_s: a running job whose owner's heartbeat is older than this is recovered.
        poll_s: how often idle workers look for jobs queued by other processes, and heartbeats are sent.
    """

    def __init__(
        self,
        store: JobStore,
        handler: JobHandler,
        *,
        workers: int = 1,
        max_attempts: int = 3,
        stale_after_s: float = 30.0,
        poll_s: float = 1.0,
    ) -> None:
        self.store = store
        self.owner = new_owner()
        self._handler = handler
        self._max_attempts = max_attempts
        self._stale_after_s = stale_after_s
        self._poll_s = poll_s
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._threads = [
            threading.Thread(target=self._work, name=f"job-worker-{i}", daemon=True) for i in range(workers)
        ]
        self._threads.append(threading.Thread(target=self._supervise, name="job-supervisor", daemon=True))

    def start(self) -> None:
        """Recover jobs orphaned by a previous crash, then start the threads."""
        recovered = self.store.recover(self._max_attempts, self._stale_after_s)
        if recovered:
            log.warning("recovered %d interrupted job(s): %s", len(recovered), ", ".join(recovered))
        for thread in self._threads:
            thread.start()

    @property
    def alive(self) -> bool:
        return all(t.is_alive() for t in self._threads) and not self._stopping.is_set()

    def wake(self) -> None:
        """Tell idle workers a job was queued."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Ask running jobs to stop at their next checkpoint (they are re-queued) and join the threads."""
        self._stopping.set()
        self._wake.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            if thread.is_alive():
                thread.join(max(0.0, deadline - time.monotonic()))

    def _work(self) -> None:
        while not self._stopping.is_set():
            job = self.store.claim_next(self.owner)
            if job is None:
                self._wake.wait(self._poll_s)
                self._wake.clear()
                continue
            self._run(job)

    def _run(self, job: JobRecord) -> None:
        ctx = JobContext(self.store, job, self.owner, self._stopping)
        try:
            self._handler(job, ctx)
        except JobInterrupted as exc:
            if exc.shutdown:
                self.store.release(job.id, self.owner)
            else:
                self.store.cancel_acknowledged(job.id, self.owner)
            return
        except VisionError as exc:
            self.store.finish(job.id, self.owner, "failed", (vision_error_status(exc)[1], str(exc)))
            return
        except Exception as exc:
            log.exception("job %s failed", job.id)
            self.store.finish(
                job.id, self.owner, "failed", ("internal_error", f"{type(exc).__name__}: {exc}")
            )
            return
        self.store.finish(job.id, self.owner, "succeeded")

    def _supervise(self) -> None:
        """Heartbeat our running jobs; recover other processes' orphans now and then."""
        last_recover = time.monotonic()
        while not self._stopping.wait(self._poll_s):
            try:
                self.store.beat(self.owner)
                if time.monotonic() - last_recover > self._stale_after_s / 3:
                    last_recover = time.monotonic()
                    if self.store.recover(self._max_attempts, self._stale_after_s):
                        self._wake.set()
            except Exception:
                log.exception("job supervisor")
