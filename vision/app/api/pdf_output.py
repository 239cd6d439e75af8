"""Per-request PDF options of ``POST /v1/ocr``: ``pdf_text`` (a PDF page's own text layer: ``auto``, ``ocr``
or ``layer``) and the searchable PDF written onto the uploaded original (:mod:`vision.export.searchable`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import Form, Query, Response

from vision.app.api.documents import download_name
from vision.export.formats import get_format
from vision.export.searchable import SearchableOptions, searchable_pdf
from vision.io.page import PageImage
from vision.structures import Document, Page

__all__ = ["PdfText", "ocr_with_pdf_text", "pdf_response", "pdf_text_option", "with_pdf_text"]

PdfText = Literal["auto", "ocr", "layer"]
_DOC = (
    "a PDF page's own text layer: auto (use it when the page has one, else OCR), "
    "ocr (always OCR), layer (never OCR)"
)


async def pdf_text_option(
    query: Annotated[PdfText | None, Query(alias="pdf_text", description=_DOC)] = None,
    form: Annotated[PdfText | None, Form(alias="pdf_text", description=_DOC)] = None,
) -> str:
    """``pdf_text`` from the query or the form (query wins); ``auto`` by default."""
    return query or form or "auto"


def ocr_with_pdf_text(
    pages: list[PageImage], mode: str, run: Callable[[list[PageImage]], list[Any]]
) -> list[Any]:
    """OCR ``pages`` with ``run`` (the service's batcher: ``auto``) as ``mode`` asks, in page order."""
    if mode == "ocr":
        for page in pages:
            page.text_layer = []  # nothing to read from: every page goes through the models
        return run(pages)
    if mode != "layer":
        return run(pages)
    layered = iter(run([p for p in pages if p.text_layer]))
    return [next(layered) if p.text_layer else Page(p.index, p.size, source=p.source) for p in pages]


class _PdfTextReader:
    """An OCR service whose ``pages()`` applies a request's ``pdf_text`` (what the chunked reader calls)."""

    def __init__(self, service: Any, mode: str) -> None:
        self.service, self.mode = service, mode

    def pages(self, pages: list[PageImage], timeout: float | None = None) -> list[Any]:
        return ocr_with_pdf_text(pages, self.mode, lambda todo: self.service.pages(todo, timeout=timeout))


def with_pdf_text(service: Any, mode: str) -> Any:
    """``service`` itself for ``auto`` (its pipeline's own behaviour), else a wrapper applying ``mode``."""
    return service if mode == "auto" else _PdfTextReader(service, mode)


def pdf_response(
    data: bytes, doc: Document, filename: str, *, mode: str, password: str | None, dpi: float
) -> Response:
    """The searchable PDF of the uploaded ``data`` (its pages and images kept) as a download."""
    options = SearchableOptions(skip_text=mode != "ocr", password=password, image_dpi=dpi)
    headers = {"Content-Disposition": f'inline; filename="{download_name(filename, "pdf")}"'}
    return Response(
        searchable_pdf(data, doc, options, name=filename),
        media_type=get_format("pdf").media_type,
        headers=headers,
    )
