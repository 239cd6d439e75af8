"""Persistent jobs: one SQLite table plus a folder per job (input, per-page checkpoints, result).

A job is ``queued`` -> ``running`` -> ``succeeded`` | ``failed`` | ``cancelled``. The row records its owner
(``host:pid:token``) and a heartbeat, so a server that starts after a crash (or a sibling worker process)
finds jobs whose owner is gone and either re-queues them (they resume from their last checkpoint) or,
after ``max_attempts`` starts, marks them failed with the reason. No job is ever left silently running.
Every write is a short transaction, so several worker processes can share one store.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["ACTIVE", "JobRecord", "JobStore", "new_owner"]

ACTIVE = ("queued", "running")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    filename TEXT NOT NULL,
    options TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    total INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    error_code TEXT,
    error_message TEXT,
    owner TEXT,
    heartbeat REAL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status, created_at);
"""


def new_owner() -> str:
    """A unique owner id for one runner: ``host:pid:token``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class JobRecord:
    """One row of the ``jobs`` table."""

    id: str
    kind: str
    status: str
    filename: str
    options: dict[str, Any]
    done: int
    total: int | None
    attempts: int
    error_code: str | None
    error_message: str | None
    owner: str | None
    heartbeat: float | None
    created_at: float
    updated_at: float

    def to_json(self) -> dict[str, Any]:
        """The public view (``JobOut``): progress as a fraction, timestamps in UTC."""
        progress = 1.0 if self.status == "succeeded" else (self.done / self.total if self.total else 0.0)
        error = (
            None
            if self.error_code is None
            else {"error": self.error_code, "message": self.error_message or ""}
        )
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "filename": self.filename,
            "done": self.done,
            "total": self.total,
            "progress": min(max(progress, 0.0), 1.0),
            "attempts": self.attempts,
            "error": error,
            "created_at": _utc(self.created_at),
            "updated_at": _utc(self.updated_at),
        }


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat()


class JobStore:
    """Jobs persisted under ``root``: ``jobs.sqlite3`` and ``<id>/{input, pages/, result.json}``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._db = self.root / "jobs.sqlite3"
        with closing(sqlite3.connect(self._db, timeout=30.0, isolation_level=None)) as con:
            con.execute("PRAGMA journal_mode=WAL")  # readers never block the writer (other processes poll)
            con.executescript(_SCHEMA)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One short transaction on a fresh connection (safe across threads and processes)."""
        with closing(sqlite3.connect(self._db, timeout=30.0, isolation_level=None)) as con:
            con.row_factory = sqlite3.Row
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def job_dir(self, job_id: str) -> Path:
        return self.root / job_id

    def input_path(self, job: JobRecord) -> Path:
        return self.job_dir(job.id) / f"input{Path(job.filename).suffix.lower()[:10]}"

    def result_path(self, job_id: str) -> Path:
        return self.job_dir(job_id) / "result.json"

    def stage(self, src: BinaryIO) -> Path:
        """Copy an upload into ``incoming/`` so it can be checked before it becomes a job.

        The name starts with this process's id, so a restarted server knows which staged uploads a dead
        process left behind (:func:`~vision.app.api.job_cleanup.remove_orphans`)."""
        incoming = self.root / "incoming"
        incoming.mkdir(exist_ok=True)
        path = incoming / f"{os.getpid()}-{uuid.uuid4().hex}"
        with open(path, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        return path

    def create(
        self, kind: str, filename: str, staged: Path, options: dict[str, Any], total: int | None = None
    ) -> JobRecord:
        """Move a staged upload into a new job folder and queue the job."""
        job_id = uuid.uuid4().hex
        now = time.time()
        record = JobRecord(
            job_id, kind, "queued", filename, options, 0, total, 0, None, None, None, None, now, now
        )
        self.job_dir(job_id).mkdir()
        staged.replace(self.input_path(record))
        with self._tx() as con:
            con.execute(
                "INSERT INTO jobs (id, kind, status, filename, options, total, created_at, updated_at) "
                "VALUES (?, ?, 'queued', ?, ?, ?, ?, ?)",
                (job_id, kind, filename, json.dumps(options), total, now, now),
            )
        return record

    def get(self, job_id: str) -> JobRecord | None:
        with self._tx() as con:
            row = con.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else _record(row)

    def claim_next(self, owner: str) -> JobRecord | None:
        """Atomically take the oldest queued job for ``owner`` (counts one more attempt)."""
        now = time.time()
        with self._tx() as con:
            row = con.execute(
                "SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_at LIMIT 1"
            ).fetchone()
            if row is None:
                return None
            con.execute(
                "UPDATE jobs SET status = 'running', owner = ?, heartbeat = ?, attempts = attempts + 1, "
                "updated_at = ? WHERE id = ?",
                (owner, now, now, row["id"]),
            )
            return _record(con.execute("SELECT * FROM jobs WHERE id = ?", (row["id"],)).fetchone())

    def _update_running(self, job_id: str, owner: str, assignments: str, **values: Any) -> bool:
        """Apply ``assignments`` to a running job ``owner`` holds and stamp ``updated_at``.

        ``assignments`` are SQL ``SET`` terms written in this module (never user text), with ``:name``
        parameters from ``values`` and ``:now``, the current time. False when the job is not ours to run
        (cancelled, finished or re-assigned).
        """
        with self._tx() as con:
            cur = con.execute(
                f"UPDATE jobs SET {assignments}, updated_at = :now "
                "WHERE id = :id AND owner = :owner AND status = 'running'",
                {**values, "now": time.time(), "id": job_id, "owner": owner},
            )
        return cur.rowcount == 1

    def progress(self, job_id: str, owner: str, done: int, total: int | None) -> bool:
        """Record progress; False when the job is no longer ours to run (cancelled or re-assigned)."""
        return self._update_running(
            job_id, owner, "done = :done, total = :total, heartbeat = :now", done=done, total=total
        )

    def finish(self, job_id: str, owner: str, status: str, error: tuple[str, str] | None = None) -> bool:
        """End a running job we own with ``status`` (and an error code and message when it failed)."""
        code, message = error if error is not None else (None, None)
        return self._update_running(
            job_id,
            owner,
            "status = :status, error_code = :code, error_message = :message, owner = NULL",
            status=status,
            code=code,
            message=message,
        )

    def release(self, job_id: str, owner: str) -> None:
        """Put a running job back in the queue (graceful shutdown): it resumes from its checkpoints."""
        self._update_running(job_id, owner, "status = 'queued', owner = NULL")

    def cancel(self, job_id: str) -> JobRecord | None:
        """Cancel a queued or running job (a running one stops at its next checkpoint).

        A running job keeps its owner until the owner has stopped working on it
        (:meth:`cancel_acknowledged`), so its files are not deleted under it."""
        with self._tx() as con:
            con.execute(
                "UPDATE jobs SET status = 'cancelled', updated_at = ? "
                "WHERE id = ? AND status IN ('queued', 'running')",
                (time.time(), job_id),
            )
        return self.get(job_id)

    def cancel_acknowledged(self, job_id: str, owner: str) -> None:
        """The owner of a cancelled job has stopped working on it."""
        with self._tx() as con:
            con.execute(
                "UPDATE jobs SET owner = NULL WHERE id = ? AND owner = ? AND status = 'cancelled'",
                (job_id, owner),
            )

    def in_use(self, job: JobRecord) -> bool:
        """Whether a live process may still be working on ``job``'s files."""
        return job.status in ACTIVE or (job.owner is not None and _owner_alive(job.owner))

    def delete(self, job_id: str) -> None:
        """Forget a finished job and remove its files."""
        with self._tx() as con:
            con.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
        shutil.rmtree(self.job_dir(job_id), ignore_errors=True)

    def beat(self, owner: str) -> None:
        """Refresh the heartbeat of every job ``owner`` is running."""
        with self._tx() as con:
            con.execute(
                "UPDATE jobs SET heartbeat = ? WHERE owner = ? AND status = 'running'", (time.time(), owner)
            )

    def recover(self, max_attempts: int, stale_after_s: float) -> list[str]:
        """Re-queue (or fail, past ``max_attempts``) running jobs whose owner is dead; returns their ids."""
        now = time.time()
        found: list[str] = []
        with self._tx() as con:
            for row in con.execute("SELECT * FROM jobs WHERE status = 'running'").fetchall():
                if _owner_alive(row["owner"]) and now - (row["heartbeat"] or 0.0) < stale_after_s:
                    continue
                found.append(row["id"])
                if row["attempts"] >= max_attempts:
                    con.execute(
                        "UPDATE jobs SET status = 'failed', error_code = 'interrupted', error_message = ?, "
                        "owner = NULL, updated_at = ? WHERE id = ?",
                        (
                            f"the server stopped while running this job {row['attempts']} times",
                            now,
                            row["id"],
                        ),
                    )
                else:
                    con.execute(
                        "UPDATE jobs SET status = 'queued', owner = NULL, updated_at = ? WHERE id = ?",
                        (now, row["id"]),
                    )
        return found

    def finished_before(self, cutoff: float) -> list[str]:
        """Ids of jobs that ended (succeeded, failed, cancelled) before ``cutoff`` (a Unix time)."""
        with self._tx() as con:
            rows = con.execute(
                "SELECT id FROM jobs WHERE status NOT IN ('queued', 'running') AND updated_at < ?", (cutoff,)
            ).fetchall()
        return [row["id"] for row in rows]

    def ids(self) -> set[str]:
        """Every job id in the table."""
        with self._tx() as con:
            return {row["id"] for row in con.execute("SELECT id FROM jobs")}

    def counts(self) -> dict[str, int]:
        """Jobs per status (every status present, zeros included)."""
        counts = dict.fromkeys(("queued", "running", "succeeded", "failed", "cancelled"), 0)
        with self._tx() as con:
            for row in con.execute("SELECT status, COUNT(*) AS n FROM jobs GROUP BY status"):
                counts[row["status"]] = row["n"]
        return counts


def _record(row: sqlite3.Row) -> JobRecord:
    data = dict(row)
    data["options"] = json.loads(data["options"])
    return JobRecord(**data)


def _owner_alive(owner: str | None) -> bool:
    """Whether the owning process still runs (other hosts count as alive: only their heartbeat tells)."""
    if not owner:
        return False
    host, pid, _token = owner.rsplit(":", 2)
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
