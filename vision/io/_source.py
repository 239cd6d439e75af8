"""Inputs as users give them (paths, bytes, binary file objects): names, byte limits and bounded reads."""

from __future__ import annotations

import io
import os
from typing import BinaryIO, Union

from vision.errors import CorruptFile, LimitExceeded, UnreadableFile
from vision.settings import Limits

__all__ = ["FileSource", "is_file_source", "source_name", "check_size", "read_bytes", "read_head"]

FileSource = Union[str, os.PathLike, bytes, bytearray, memoryview, BinaryIO]

HEAD_BYTES = 4096  # enough for every magic number we sniff (PDF allows 1 KiB of junk before "%PDF-")


def is_file_source(obj: object) -> bool:
    """Whether ``obj`` is a path, a bytes-like object or a readable binary file object."""
    return isinstance(obj, (str, os.PathLike, bytes, bytearray, memoryview)) or hasattr(obj, "read")


def source_name(src: object) -> str:
    """A short name for messages: the path, the file object's name, or ``"<bytes>"``."""
    if isinstance(src, (str, os.PathLike)):
        return os.fspath(src)
    if isinstance(src, (bytes, bytearray, memoryview)):
        return "<bytes>"
    name = getattr(src, "name", None)
    return name if isinstance(name, str) else "<stream>"


def _stat_size(path: str) -> int:
    try:
        if os.path.isdir(path):
            raise UnreadableFile(path, "is a directory")
        return os.stat(path).st_size
    except FileNotFoundError:
        raise UnreadableFile(path, "no such file") from None
    except OSError as exc:
        raise UnreadableFile(path, f"cannot open ({exc.strerror or exc})") from None


def check_size(size: int, name: str, limits: Limits) -> None:
    """Reject empty inputs and inputs over ``limits.max_bytes``."""
    if size == 0:
        raise CorruptFile(name, "empty file (0 bytes)")
    if size > limits.max_bytes:
        raise LimitExceeded(name, f"{size} bytes is over the limit of {limits.max_bytes} bytes (max_bytes)")


def check_path(path: str | os.PathLike, limits: Limits) -> str:
    """Check that ``path`` is a readable file within the byte limit; returns it as a string."""
    name = os.fspath(path)
    check_size(_stat_size(name), name, limits)
    return name


def read_bytes(src: FileSource, limits: Limits) -> bytes:
    """The whole content of ``src``, never reading more than ``limits.max_bytes + 1`` bytes."""
    name = source_name(src)
    if isinstance(src, (str, os.PathLike)):
        check_path(src, limits)
        try:
            with open(src, "rb") as fh:
                data = fh.read(limits.max_bytes + 1)
        except OSError as exc:
            raise UnreadableFile(name, f"cannot read ({exc.strerror or exc})") from None
    elif isinstance(src, (bytes, bytearray, memoryview)):
        data = bytes(src)
    elif hasattr(src, "read"):
        try:
            data = src.read(limits.max_bytes + 1)
        except (OSError, ValueError) as exc:
            raise UnreadableFile(name, f"cannot read ({exc})") from None
        if not isinstance(data, (bytes, bytearray)):
            raise UnreadableFile(name, "file object is not opened in binary mode")
        data = bytes(data)
    else:
        raise TypeError(f"expected a path, bytes or a binary file object, got {type(src).__name__}")
    check_size(len(data), name, limits)
    return data


def read_head(src: FileSource, limits: Limits) -> tuple[bytes, FileSource]:
    """The first bytes of ``src`` for sniffing, and a source that still yields the whole content.

    Paths and bytes are returned unchanged; a file object is rewound when seekable, else read
    (bounded by the byte limit) into a ``BytesIO``.
    """
    if isinstance(src, (str, os.PathLike)):
        name = check_path(src, limits)
        try:
            with open(name, "rb") as fh:
                return fh.read(HEAD_BYTES), src
        except OSError as exc:
            raise UnreadableFile(name, f"cannot read ({exc.strerror or exc})") from None
    if isinstance(src, (bytes, bytearray, memoryview)):
        check_size(len(src), "<bytes>", limits)
        return bytes(src[:HEAD_BYTES]), src
    data = read_bytes(src, limits)
    return data[:HEAD_BYTES], _NamedBytesIO(data, source_name(src))


class _NamedBytesIO(io.BytesIO):
    """A ``BytesIO`` that keeps the name of the stream it was read from (for messages)."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name
