"""Uploads in, documents out: open an upload within the limits, and render a Document in a chosen format."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Response, UploadFile
from fastapi.responses import JSONResponse

from vision.app.api.errors import ApiError
from vision.errors import VisionError
from vision.io import DocumentFile
from vision.io._source import FileSource
from vision.io.page import PageImage
from vision.settings import Limits
from vision.export.formats import get_format
from vision.export.formats import render as render_format
from vision.structures import Document

__all__ = [
    "ReadOptions",
    "check_size",
    "iter_pages",
    "open_document",
    "parse_pages",
    "renamed",
    "response",
]

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True)
class ReadOptions:
    """How to read an upload: PDF page selection (0-based), rendering dpi and password."""

    pages: tuple[int, ...] | None = None
    dpi: float = 144.0
    password: str | None = None

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :meth:`DocumentFile.from_path`."""
        out: dict[str, Any] = {"dpi": self.dpi}
        if self.pages is not None:
            out["pages"] = list(self.pages)
        if self.password is not None:
            out["password"] = self.password
        return out


def parse_pages(spec: str | None, max_pages: int) -> tuple[int, ...] | None:
    """``"1-3,7"`` (1-based, as in print dialogs) -> ``(0, 1, 2, 6)``; ``None``/blank selects every page.

    Raises:
        ApiError: 422 on malformed or reversed ranges, 413 when more than ``max_pages`` are selected.
    """
    if spec is None or not spec.strip():
        return None
    selected: list[int] = []
    for part in spec.split(","):
        match = _RANGE.match(part)
        first, last = (int(match.group(1)), int(match.group(2) or match.group(1))) if match else (0, 0)
        if not match or first < 1 or last < first:
            raise ApiError(
                422, "invalid_pages", f"pages: {part.strip()!r} is not a page or range like 2 or 1-3"
            )
        if len(selected) + last - first + 1 > max_pages:
            raise ApiError(413, "limit_exceeded", f"pages: more than {max_pages} pages selected (max_pages)")
        selected.extend(range(first - 1, last))
    return tuple(selected)


def check_size(upload: UploadFile, max_bytes: int) -> int:
    """The upload's size in bytes; 413 over ``max_bytes`` (the reader would refuse it later anyway)."""
    size = upload.size
    if size is None:
        size = upload.file.seek(0, 2)
        upload.file.seek(0)
    if size > max_bytes:
        raise ApiError(
            413,
            "limit_exceeded",
            f"{upload.filename or 'file'}: {size} bytes is over the limit of {max_bytes} bytes (max_bytes)",
        )
    return size


def renamed(exc: VisionError, source: str) -> VisionError:
    """The same error naming ``source`` (the client's file name) instead of a temporary path."""
    return type(exc)(source, exc.reason)


def open_document(
    src: FileSource, filename: str, limits: Limits, options: ReadOptions, **extra: Any
) -> DocumentFile:
    """Sniff and open ``src``; reader errors name ``filename``."""
    try:
        return DocumentFile.from_path(src, limits=limits, **options.kwargs(), **extra)
    except VisionError as exc:
        raise renamed(exc, filename) from exc


def iter_pages(doc: DocumentFile, filename: str, indices: range | None = None) -> Iterator[PageImage]:
    """Decode pages (all, or ``indices`` of an indexable document), named ``filename`` like their errors."""
    try:
        for page in doc if indices is None else (doc[i] for i in indices):
            page.source = filename
            yield page
    except VisionError as exc:
        raise renamed(exc, filename) from exc


def download_name(filename: str, fmt: str) -> str:
    """``scan.pdf`` + ``hocr`` -> ``scan.hocr.html`` (ASCII letters, digits, ``._-`` only)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(filename).stem).strip("._") or "document"
    return stem[:100] + get_format(fmt).extension


def response(doc: Document, fmt: str, filename: str) -> Response:
    """``doc`` as a response in ``fmt`` (``json`` is the document JSON; others are downloads)."""
    if fmt == "json":
        return JSONResponse(doc.export())
    headers = {"Content-Disposition": f'inline; filename="{download_name(filename, fmt)}"'}
    return Response(render_format(doc, fmt), media_type=get_format(fmt).media_type, headers=headers)
