"""Inputs named by URI: ``s3://bucket/scans/``, ``gs://bucket/a.pdf``, ``hdfs://...``, ``file:///data/in/``.

They are listed and read through pyarrow's filesystems (``pyarrow.fs.FileSystem.from_uri``: Arrow's S3, GCS,
HDFS and local filesystems, with credentials from their usual environment variables and files), which Ray
Data already brings, so ``vision ocr --engine ray s3://bucket/scans/`` lists the documents on the driver and
each read task fetches its own document on whichever node runs it. The same URIs work with the local engine.

A URI naming a folder (a prefix, on object stores) contributes the files under it whose suffix is a document
suffix (recursively with ``recursive``), each with its name relative to the folder, as a local folder does;
a URI naming an object contributes that object whatever its suffix. Reads stop at the byte limit.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from vision.errors import LimitExceeded, UnreadableFile, VisionError

__all__ = ["is_uri", "list_uri", "read_uri"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_uri(name: object) -> bool:
    """Whether ``name`` is a string with a URI scheme (``s3://...``); paths and ``-`` are not."""
    return isinstance(name, str) and _SCHEME.match(name) is not None


def _filesystem(uri: str) -> tuple[Any, str]:
    """``(pyarrow filesystem, path in it)`` of ``uri``."""
    try:
        from pyarrow import fs
    except ImportError:  # pragma: no cover - pyarrow comes with the distributed extra
        raise VisionError(uri, "URI inputs need pyarrow: pip install 'vision-ocr[distributed]'") from None
    try:
        return fs.FileSystem.from_uri(uri)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ... for a bad URI
        raise UnreadableFile(uri, f"cannot open its filesystem ({exc})") from None


def list_uri(
    uri: str, suffixes: Collection[str], recursive: bool
) -> tuple[list[tuple[str, Path]], list[str]]:
    """The files ``uri`` names (see the module docstring): ``(file URI, name relative to the folder given)``
    pairs in name order, and messages for a URI that names nothing or cannot be listed."""
    try:
        filesystem, path = _filesystem(uri)
        from pyarrow import fs

        info = filesystem.get_file_info(path)
        if info.type == fs.FileType.File:
            return [(uri, Path(PurePosixPath(path).name))], []
        if info.type != fs.FileType.Directory:
            return [], [f"{uri}: no such file or folder"]
        infos = filesystem.get_file_info(fs.FileSelector(path, recursive=recursive))
    except VisionError as exc:
        return [], [str(exc)]
    except Exception as exc:  # noqa: BLE001 - listing a remote store fails in many ways (auth, network)
        return [], [f"{uri}: cannot list it ({exc})"]
    base, _, query = uri.partition("?")
    root = PurePosixPath(path)
    found = []
    tail = f"?{query}" if query else ""
    for item in sorted((i for i in infos if i.type == fs.FileType.File), key=lambda i: i.path):
        rel = PurePosixPath(item.path).relative_to(root)
        if rel.suffix.lower() in suffixes:
            # a URI escapes what it cannot hold (" ", "%", ...); the filesystem unescapes it again
            found.append((f"{base.rstrip('/')}/{quote(rel.as_posix())}{tail}", Path(rel)))
    return found, []


def read_uri(uri: str, limit: int) -> bytes:
    """The bytes of the file ``uri`` names, at most ``limit`` of them.

    Raises:
        UnreadableFile: it cannot be opened or read.
        LimitExceeded: it holds more than ``limit`` bytes.
    """
    filesystem, path = _filesystem(uri)
    try:
        with filesystem.open_input_stream(path) as stream:
            data = stream.read(limit + 1)
    except Exception as exc:  # noqa: BLE001 - FileNotFoundError, permissions, network, ...
        raise UnreadableFile(uri, f"cannot read it ({exc})") from None
    if len(data) > limit:
        raise LimitExceeded(uri, f"over the limit of {limit} bytes (max_bytes)")
    return bytes(data)
