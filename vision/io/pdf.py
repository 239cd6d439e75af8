"""PDF reader: pages rendered lazily, one at a time, with pypdfium2, plus each page's text layer.

By default (``Limits.pdf_sandbox``) PDFium runs in a worker process per document with CPU, memory and
wall-clock limits (:mod:`vision.io.pdf_worker`); otherwise in this process (:mod:`vision.io.pdf_backend`).
"""

from __future__ import annotations

import math
import multiprocessing
import os
from typing import Any, Iterator, Sequence

import numpy as np

from vision.errors import CorruptFile, InvalidPages, LimitExceeded, UnsupportedFormat
from vision.io._source import FileSource, check_path, read_bytes, read_head, source_name
from vision.io.document import DocumentFile
from vision.io.page import PageImage
from vision.io.pdf_backend import LocalPdf
from vision.io.pdf_worker import PdfWorker
from vision.io.sniff import describe_unsupported, kind_of, sniff_format
from vision.settings import Limits

__all__ = ["PdfFile"]


def _select_pages(pages: Sequence[int] | int | None, count: int, name: str) -> list[int]:
    if pages is None:
        return list(range(count))
    wanted = [pages] if isinstance(pages, (int, np.integer)) else list(pages)
    selected = []
    for page in wanted:
        if isinstance(page, bool) or not isinstance(page, (int, np.integer)):
            raise TypeError(f"page numbers must be ints, got {page!r}")
        if not -count <= page < count:
            raise InvalidPages(name, f"page {page} out of range (the PDF has {count} pages, numbered from 0)")
        selected.append(int(page) % count)
    if not selected:
        raise InvalidPages(name, "no pages selected")
    return selected


class PdfFile(DocumentFile):
    """Pages of a PDF (see :meth:`DocumentFile.from_pdf`)."""

    kind = "pdf"

    def __init__(
        self,
        source: FileSource,
        *,
        dpi: float,
        pages: Sequence[int] | int | None,
        password: str | None,
        limits: Limits,
    ) -> None:
        name = source_name(source)
        super().__init__(name, limits)
        if not (isinstance(dpi, (int, float)) and math.isfinite(dpi) and dpi > 0):
            raise ValueError(f"dpi must be a positive number, got {dpi!r}")
        if dpi > limits.pdf_max_dpi:
            raise LimitExceeded(name, f"dpi {dpi} is over the limit of {limits.pdf_max_dpi} (pdf_max_dpi)")
        self.dpi = float(dpi)
        head, source = read_head(source, limits)
        fmt = sniff_format(head)
        if fmt != "pdf":
            reason = (
                f"is a {fmt.upper()} file, not a PDF (use DocumentFile.from_path)"
                if kind_of(fmt)
                else ("not a PDF (no %PDF- header)" if fmt is None else describe_unsupported(fmt))
            )
            raise UnsupportedFormat(name, reason)
        data: Any = (
            check_path(source, limits)
            if isinstance(source, (str, os.PathLike))
            else read_bytes(source, limits)
        )
        # A daemonic process (a multiprocessing pool worker) may not start children: it is itself the
        # sandbox its parent supervises, so PDFium runs in it.
        sandbox = limits.pdf_sandbox and not multiprocessing.current_process().daemon
        opener = PdfWorker if sandbox else LocalPdf
        self._pdf: LocalPdf | PdfWorker = opener(data, name, password, limits)
        try:
            self._init_pages(pages)
        except BaseException:
            self._pdf.close()
            raise

    def _init_pages(self, pages: Sequence[int] | int | None) -> None:
        count = len(self._pdf)
        if count <= 0:
            raise CorruptFile(self.source, "PDF has no pages")
        self.page_count = count
        self._pages = _select_pages(pages, count, self.source)
        if len(self._pages) > self.limits.max_pages:
            raise LimitExceeded(
                self.source,
                f"{len(self._pages)} pages selected, over the limit of "
                f"{self.limits.max_pages} (max_pages; select fewer with pages=...)",
            )
        self._sizes = {i: self._page_size(i) for i in self._pages}

    def _page_size(self, index: int) -> tuple[float, float]:
        """``(width, height)`` in points, checked against the pixel limit at our dpi before rendering."""
        width, height = self._pdf.page_size(index)
        if not (math.isfinite(width) and math.isfinite(height) and width > 0 and height > 0):
            raise CorruptFile(self.source, f"page {index} has an invalid size {width}x{height} pt")
        px_w, px_h = (math.ceil(v * self.dpi / 72) for v in (width, height))
        if px_w * px_h > self.limits.max_pixels:
            raise LimitExceeded(
                self.source,
                f"page {index} renders to {px_w}x{px_h} pixels at {self.dpi:g} dpi, "
                f"over the limit of {self.limits.max_pixels} (max_pixels; lower dpi)",
            )
        return width, height

    def __len__(self) -> int:
        return len(self._pages)

    def page_pixels(self, index: int) -> int:
        """Pixels the ``index``-th selected page renders to at this document's dpi."""
        width, height = self._sizes[self._pages[self._check_index(index)]]
        return math.ceil(width * self.dpi / 72) * math.ceil(height * self.dpi / 72)

    def __iter__(self) -> Iterator[PageImage]:
        for position in range(len(self._pages)):
            yield self[position]

    def __getitem__(self, index: int) -> PageImage:
        """Render the ``index``-th selected page (RGB uint8) and extract its text layer."""
        page_index = self._pages[self._check_index(index)]
        width, height = self._sizes[page_index]
        rgb, words = self._pdf.render(page_index, self.dpi / 72)
        return PageImage(
            rgb, self.source, page_index, (round(height), round(width)), dpi=self.dpi, text_layer=words
        )

    def describe(self) -> dict[str, Any]:
        """Page count and, per selected page, size in points and pixels and whether it has a text layer."""
        pages = []
        for index in self._pages:
            width, height = self._sizes[index]
            pages.append(
                {
                    "index": index,
                    "width_pt": round(width, 2),
                    "height_pt": round(height, 2),
                    "width": math.ceil(width * self.dpi / 72),
                    "height": math.ceil(height * self.dpi / 72),
                    "has_text": self._pdf.has_text(index),
                }
            )
        return {
            "source": self.source,
            "kind": self.kind,
            "page_count": self.page_count,
            "dpi": self.dpi,
            "pages": pages,
        }

    def close(self) -> None:
        if getattr(self, "_pdf", None) is not None:
            self._pdf.close()
