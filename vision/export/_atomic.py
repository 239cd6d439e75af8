"""Atomic file writes for exporters and the CLI: readers see the old file or the whole new one."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(target: str | os.PathLike[str], data: bytes | str, *, durable: bool = False) -> None:
    """Write ``data`` (``str`` as UTF-8) to a sibling temporary file, then rename it over ``target``.

    The file is created with ``os.open(..., 0o666)`` rather than ``tempfile.mkstemp`` so that it gets
    the usual umask-derived permissions instead of mkstemp's private 0600. On any failure the temporary
    file is removed and ``target`` is left as it was. ``durable`` flushes the data to disk (``fsync``)
    before the rename, so that even a machine crash leaves the old file or the whole new one (job state).
    """
    target = Path(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
