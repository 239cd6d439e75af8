"""Pages decoded and OCR'd chunk by chunk within the process's decoded-pixel budget.

Every interface (``POST /v1/ocr``, jobs, the UI) reads documents through :func:`ocr_chunks`: a chunk's
pixels are reserved in the shared :class:`~vision.io.budget.PixelBudget` before its pages are decoded and
released once the OCR service has returned them, so no document is ever held as a list of page images.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from vision.app.api.documents import iter_pages
from vision.app.api.runtime import OcrService
from vision.io import DocumentFile
from vision.io.budget import PixelBudget
from vision.structures import Page

__all__ = ["chunk_indices", "ocr_chunks"]


def chunk_indices(pixels: Sequence[int], first: int, max_pages: int, max_pixels: int) -> list[range]:
    """Split pages ``first..len(pixels)`` into runs of at most ``max_pages`` pages and ``max_pixels``
    pixels (a page bigger than ``max_pixels`` is a chunk of its own)."""
    chunks: list[range] = []
    start, total = first, 0
    for index in range(first, len(pixels)):
        if index > start and (index - start >= max_pages or total + pixels[index] > max_pixels):
            chunks.append(range(start, index))
            start, total = index, 0
        total += pixels[index]
    if start < len(pixels):
        chunks.append(range(start, len(pixels)))
    return chunks


def ocr_chunks(
    doc: DocumentFile,
    filename: str,
    ocr: OcrService,
    budget: PixelBudget,
    *,
    first: int = 0,
    chunk_pages: int = 16,
    timeout_s: float | None = None,
    keep_images: bool = False,
) -> Iterator[tuple[range, list[Page]]]:
    """Yield ``(indices, pages)`` for consecutive chunks of ``doc`` from page ``first``.

    Args:
        chunk_pages: most pages per chunk (the chunk's pixels are also kept under a quarter of the budget,
            so several callers share it).
        timeout_s: time allowed for the whole document, waiting for budget and OCR included.
        keep_images: leave each page's image on the result (searchable PDFs draw on it): the whole
            document's pixels are then reserved up front; otherwise each image is dropped as soon as
            its chunk is OCR'd.

    Raises:
        BudgetBusy: budget not available in time; TimeoutError: OCR did not finish in time;
        LimitExceeded: one page is over the whole budget; VisionError: reading failed.
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s

    def left(floor: float = 0.0) -> float | None:
        return None if deadline is None else max(floor, deadline - time.monotonic())

    pixels = [doc.page_pixels(i) for i in range(len(doc))]
    chunks = chunk_indices(pixels, first, chunk_pages, max(1, budget.capacity // 4))
    # Kept images outlive their chunk: the whole document is reserved up front instead.
    whole = sum(pixels[first:]) if keep_images else 0
    with budget.hold(whole, left(), source=filename):
        for indices in chunks:
            need = 0 if keep_images else sum(pixels[i] for i in indices)
            with budget.hold(need, left(), source=filename):
                pages = list(iter_pages(doc, filename, indices))
                result = ocr.pages(pages, timeout=left(0.001))
                del pages
                if not keep_images:
                    for page in result:
                        page.image = None
            yield indices, result
