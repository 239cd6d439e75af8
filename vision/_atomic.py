"""Atomic file writes: a reader sees the old file or the whole new one, never a part.

Every writer of the package (exports, CLI outputs, video outputs, job state, ONNX exports, downloads) goes
through this module. Temporary siblings are named ``.{name}.{pid}.{random}.tmp`` (see :func:`remove_partials`)
and created with the umask-derived permissions of any new file (not ``mkstemp``'s private 0600).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "remove_partials", "write_atomically"]


def _sibling(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def write_atomically(target: str | os.PathLike[str], data: bytes | str, *, durable: bool = False) -> None:
    """Write ``data`` (``str`` as UTF-8) to a temporary sibling, then rename it over ``target``.

    On any failure the temporary file is removed and ``target`` is left as it was. ``durable`` flushes the
    data to disk (``fsync``) before the rename, so that even a machine crash leaves the old file or the whole
    new one (job state, resumable outputs).
    """
    target = Path(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = _sibling(target)
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


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary sibling path for a writer that needs a file name (an exporter, a download); renamed over
    ``target`` when the block ends normally, removed when it raises."""
    target = Path(target)
    tmp = _sibling(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def remove_partials(target: str | os.PathLike[str]) -> None:
    """Delete the temporary siblings of ``target`` that a killed process left behind."""
    target = Path(target)
    if target.parent.is_dir():
        for part in target.parent.glob(f".{target.name}.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                part.unlink()
