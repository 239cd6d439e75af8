"""Job housekeeping: files a crashed process left behind, expired jobs, and the disk quota.

* ``incoming/<pid>-<token>``: an upload being checked; left behind when its process died mid-upload.
* ``<job id>/`` without a row: a job folder whose creation was cut short.
* Finished jobs past the retention time are deleted with their files.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

from vision.app.api.job_store import JobStore

__all__ = ["expire", "remove_orphans", "stored_bytes"]

log = logging.getLogger(__name__)

_GRACE_S = 300.0  # a job folder this young may still be getting its row from another process


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(store: JobStore) -> list[Path]:
    """Delete staged uploads of dead processes and job folders that have no row; returns what went."""
    removed: list[Path] = []
    incoming = store.root / "incoming"
    for path in incoming.glob("*") if incoming.is_dir() else ():
        pid = path.name.split("-", 1)[0]
        if not pid.isdigit() or not _pid_alive(int(pid)) or int(pid) == os.getpid():
            path.unlink(missing_ok=True)
            removed.append(path)
    known = store.ids()
    now = time.time()
    for folder in store.root.iterdir():
        orphan = folder.is_dir() and len(folder.name) == 32 and folder.name not in known
        if orphan and now - folder.stat().st_mtime > _GRACE_S:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    if removed:
        log.warning("removed %d orphaned job file(s)", len(removed))
    return removed


def expire(store: JobStore, retention_s: float) -> list[str]:
    """Delete jobs that finished more than ``retention_s`` ago (unless a live process still uses them)."""
    gone = []
    for job_id in store.finished_before(time.time() - retention_s):
        job = store.get(job_id)
        if job is not None and not store.in_use(job):
            store.delete(job_id)
            gone.append(job_id)
    return gone


def stored_bytes(store: JobStore) -> int:
    """Bytes of job inputs on disk (the quota counts inputs: results are small beside them)."""
    total = 0
    for path in store.root.glob("*/input*"):
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total
