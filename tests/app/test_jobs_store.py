"""JobStore (SQLite + files) and JobRunner (threads, checkpoints, recovery) without any model."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vision.app.api.job_runner import JobContext, JobRunner
from vision.app.api.job_store import JobRecord, JobStore
from vision.errors import CorruptFile


def _dead_owner() -> str:
    """An owner id naming a process of this host that has exited."""
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    return f"{socket.gethostname()}:{int(proc.stdout)}:deadbeef"


def _new_job(store: JobStore, name: str = "scan.pdf", total: int | None = 3) -> JobRecord:
    return store.create(
        "document", name, store.stage(io.BytesIO(b"%PDF-1.4 test")), {"dpi": 144.0}, total=total
    )


def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def test_lifecycle_and_public_view(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    job = _new_job(store)
    assert store.input_path(job).read_bytes() == b"%PDF-1.4 test"
    assert list((tmp_path / "incoming").iterdir()) == []
    claimed = store.claim_next("me:1:a")
    assert claimed is not None and (claimed.id, claimed.status, claimed.attempts) == (job.id, "running", 1)
    assert store.claim_next("me:1:a") is None
    assert store.progress(job.id, "me:1:a", 2, 3)
    assert not store.progress(job.id, "someone:2:b", 3, 3)  # not the owner
    assert store.finish(job.id, "me:1:a", "succeeded")
    view = store.get(job.id).to_json()
    assert {
        k: view[k]
        for k in ("id", "kind", "status", "filename", "done", "total", "progress", "attempts", "error")
    } == {
        "id": job.id,
        "kind": "document",
        "status": "succeeded",
        "filename": "scan.pdf",
        "done": 2,
        "total": 3,
        "progress": 1.0,
        "attempts": 1,
        "error": None,
    }
    assert store.counts() == {"queued": 0, "running": 0, "succeeded": 1, "failed": 0, "cancelled": 0}
    store.delete(job.id)
    assert store.get(job.id) is None and not store.job_dir(job.id).exists()


def test_recover_requeues_orphans_then_fails_them_after_max_attempts(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    job = _new_job(store)
    dead = _dead_owner()
    for attempt in (1, 2):
        assert store.claim_next(dead).attempts == attempt
        assert store.progress(job.id, dead, attempt, 3)
        assert store.recover(max_attempts=3, stale_after_s=60) == [job.id]
        again = store.get(job.id)
        assert (again.status, again.done, again.owner) == ("queued", attempt, None)  # progress is kept
    store.claim_next(dead)
    assert store.recover(max_attempts=3, stale_after_s=60) == [job.id]
    failed = store.get(job.id).to_json()
    assert failed["status"] == "failed" and failed["attempts"] == 3
    assert failed["error"] == {
        "error": "interrupted",
        "message": "the server stopped while running this job 3 times",
    }


def test_recover_leaves_live_owners_alone_unless_their_heartbeat_is_stale(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    job = _new_job(store)
    live = f"{socket.gethostname()}:{__import__('os').getpid()}:cafe"
    store.claim_next(live)
    assert store.recover(max_attempts=3, stale_after_s=60) == []
    time.sleep(0.1)
    assert store.recover(max_attempts=3, stale_after_s=0.05) == [job.id]


def test_cancel_queued_and_running(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    queued, running = _new_job(store, "a.pdf"), _new_job(store, "b.pdf")
    store.claim_next("me:1:a")  # oldest first: a.pdf
    store.claim_next("me:1:a")
    assert store.cancel(queued.id).status == "cancelled"
    assert store.cancel(running.id).status == "cancelled"
    assert not store.progress(running.id, "me:1:a", 1, 3)  # the runner sees it at its next checkpoint
    assert not store.finish(running.id, "me:1:a", "succeeded")
    assert store.get(running.id).status == "cancelled"


class Steps:
    """A handler doing ``total`` checkpointed steps; with a ``gate``, each step takes one permit from it."""

    def __init__(
        self, total: int = 3, gate: threading.Semaphore | None = None, fail: Exception | None = None
    ) -> None:
        self.total, self.gate, self.fail = total, gate, fail
        self.starts: list[tuple[int, int]] = []  # (attempt, first step) per start
        self.waiting: list[int] = []  # steps that reached the gate

    def __call__(self, job: JobRecord, ctx: JobContext) -> None:
        current = ctx.store.get(job.id)
        self.starts.append((job.attempts, current.done))
        if self.fail is not None:
            raise self.fail
        for step in range(current.done, self.total):
            if self.gate is not None:
                self.waiting.append(step + 1)
                assert self.gate.acquire(timeout=10)
            ctx.checkpoint(step + 1, self.total)


@contextmanager
def _running(store: JobStore, handler: Steps) -> Iterator[JobRunner]:
    """A started runner polling every 50 ms, stopped on exit."""
    runner = JobRunner(store, handler, poll_s=0.05)
    runner.start()
    try:
        yield runner
    finally:
        runner.stop()


def test_runner_runs_jobs(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    ok = _new_job(store)
    with _running(store, Steps()):
        _wait_for(lambda: store.get(ok.id).status == "succeeded")
        assert store.get(ok.id).done == 3


@pytest.mark.parametrize(
    ("fail", "error"),
    [
        (CorruptFile("b.pdf", "no xref table"), {"error": "corrupt_file", "message": "b.pdf: no xref table"}),
        (KeyError("x"), {"error": "internal_error", "message": "KeyError: 'x'"}),
    ],
)
def test_runner_records_failures(tmp_path: Path, fail: Exception, error: dict[str, str]) -> None:
    store = JobStore(tmp_path)
    bad = _new_job(store)
    with _running(store, Steps(fail=fail)):
        _wait_for(lambda: store.get(bad.id).status == "failed")
        assert store.get(bad.id).to_json()["error"] == error


def test_shutdown_requeues_and_the_next_runner_resumes(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    job = _new_job(store)
    gate = threading.Semaphore(0)
    first = Steps(total=5, gate=gate)
    runner = JobRunner(store, first, poll_s=0.05)
    runner.start()
    gate.release()  # one step
    _wait_for(lambda: first.waiting == [1, 2])  # step 1 checkpointed, the handler waits before step 2
    stopper = threading.Thread(target=runner.stop)
    stopper.start()
    time.sleep(0.1)
    gate.release()  # the handler reaches its next checkpoint, sees the stop and gives the job back
    stopper.join(10)
    interrupted = store.get(job.id)
    assert (interrupted.status, interrupted.done) == ("queued", 2)
    second = Steps(total=5)
    with _running(store, second):
        _wait_for(lambda: store.get(job.id).status == "succeeded")
    assert second.starts == [(2, 2)]  # second attempt, from the last checkpoint
    assert store.get(job.id).done == 5


def test_cancelling_a_running_job_stops_it_at_the_next_checkpoint(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    job = _new_job(store)
    gate = threading.Semaphore(0)
    with _running(store, Steps(total=5, gate=gate)):
        _wait_for(lambda: store.get(job.id).status == "running")
        store.cancel(job.id)
        gate.release(5)
        time.sleep(0.3)
        final = store.get(job.id)
        assert (final.status, final.done) == ("cancelled", 0)
