"""``POST /v1/ocr``: OCR an uploaded image or PDF synchronously, in any export format."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Response, UploadFile

from vision.app.api.dependencies import (
    get_budget,
    get_limits,
    get_ocr,
    ocr_format,
    ocr_geometry,
    ocr_lang,
    read_options,
    require_api_key,
)
from vision.app.api.documents import ReadOptions, check_size, open_document, response
from vision.app.api.errors import ApiError
from vision.app.api.paging import ocr_chunks
from vision.app.api.priority import background_thread
from vision.app.api.pdf_output import pdf_response, pdf_text_option, with_pdf_text
from vision.app.api.request_batcher import QueueFull, QueueTimeout
from vision.app.api.runtime import OcrService
from vision.app.api.schemas import DocumentOut, ErrorBody, OcrFormat
from vision.app.api.security import check_filename
from vision.app.api.settings import LimitSettings
from vision.export.formats import FORMATS
from vision.io import DocumentFile
from vision.io.budget import BudgetBusy, PixelBudget
from vision.structures import Document

__all__ = ["ERROR_RESPONSES", "ocr_errors", "ocr_in_budget", "router", "run_ocr"]

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "the multipart body could not be parsed"},
    401: {"model": ErrorBody, "description": "missing or wrong X-API-Key"},
    413: {"model": ErrorBody, "description": "a limit was exceeded (bytes, pixels, pages, request time)"},
    415: {"model": ErrorBody, "description": "not an image, PDF or video we read"},
    422: {"model": ErrorBody, "description": "invalid options, or a corrupt or encrypted file"},
    503: {"model": ErrorBody, "description": "overloaded: too many pages queued; retry later"},
}

router = APIRouter(prefix="/v1", tags=["ocr"], dependencies=[Depends(require_api_key)])


@contextmanager
def ocr_errors(timeout: float) -> Iterator[None]:
    """Map overload (queue or pixel budget full) to 503 and a too-long run to 413."""
    try:
        yield
    except QueueTimeout as exc:  # named by the whole request's limit: each chunk waits what is left of it
        raise ApiError(
            503,
            "overloaded",
            f"the server is busy (still queued after {timeout:g} s); retry later",
            headers={"Retry-After": "1"},
        ) from exc
    except (QueueFull, BudgetBusy) as exc:
        raise ApiError(
            503, "overloaded", f"the server is busy ({exc}); retry later", headers={"Retry-After": "1"}
        ) from exc
    except TimeoutError as exc:
        raise ApiError(
            413,
            "request_timeout",
            f"processing took longer than the {timeout:g} s request limit; "
            "submit large documents to POST /v1/jobs",
        ) from exc


def run_ocr(ocr: OcrService, pages: list[Any], timeout: float) -> list[Any]:
    """OCR pages through the batcher, mapping overload to 503 and a too-long run to 413."""
    with ocr_errors(timeout):
        return ocr.pages(pages, timeout=timeout)


def check_request_pixels(doc: DocumentFile, name: str, limit: int) -> None:
    """413 when the pages of a synchronous request decode to more than ``limit`` pixels in all."""
    total = sum(doc.page_pixels(i) for i in range(len(doc)))
    if total > limit:
        raise ApiError(
            413,
            "limit_exceeded",
            f"{name}: {len(doc)} pages decode to {total} pixels, over the {limit} of a synchronous request "
            "(max_request_pixels); lower dpi, select pages, or submit it to POST /v1/jobs",
        )


def ocr_in_budget(
    ocr: OcrService, budget: PixelBudget, doc: DocumentFile, name: str, timeout: float, *, keep_images: bool
) -> list:
    """Decode and OCR ``doc`` chunk by chunk within the process's pixel budget."""
    with ocr_errors(timeout):
        chunks = ocr_chunks(doc, name, ocr, budget, timeout_s=timeout, keep_images=keep_images)
        return [page for _, chunk in chunks for page in chunk]


@router.post(
    "/ocr",
    summary="OCR an image or a PDF",
    response_model=DocumentOut,
    responses={
        **ERROR_RESPONSES,
        200: {
            "content": {FORMATS[f].media_type: {} for f in OcrFormat.__members__},
            "description": "the document, in the requested format",
        },
    },
)
def ocr(
    file: Annotated[UploadFile, File(description="an image (PNG, JPEG, WebP, BMP, GIF, TIFF) or a PDF")],
    fmt: Annotated[OcrFormat, Depends(ocr_format)],
    read: Annotated[ReadOptions, Depends(read_options)],
    limits: Annotated[LimitSettings, Depends(get_limits)],
    service: Annotated[OcrService, Depends(get_ocr)],
    budget: Annotated[PixelBudget, Depends(get_budget)],
    geometry: Annotated[dict[str, bool | str], Depends(ocr_geometry)],
    pdf_text: Annotated[str, Depends(pdf_text_option)] = "auto",
    lang: Annotated[str | None, Depends(ocr_lang)] = None,
) -> Response:
    """Read every page (or the selected PDF pages), OCR them and return the document.

    ``lang``, ``orientation``, ``rotated`` and ``photo`` pick the predictor (the same models, one batcher per option
    set). Pages of concurrent requests are merged into model batches. Videos and documents over the
    synchronous page limit go to ``POST /v1/jobs``.
    """
    background_thread(getattr(service, "nice", 0))  # a request thread: decoding and exporting yield to the event loop
    filename = check_filename(file.filename)
    check_size(file, limits.max_bytes)
    with open_document(file.file, filename, limits.reader_limits(), read) as doc:
        if doc.kind == "video":
            raise ApiError(422, "use_jobs", f"{filename}: videos are processed as jobs: POST /v1/jobs")
        try:
            service = service.variant(lang=lang, **geometry)
        except ValueError as exc:
            code = "invalid_lang" if "language" in str(exc) else "invalid_request"
            raise ApiError(422, code, str(exc)) from exc
        check_request_pixels(doc, filename, limits.max_request_pixels)
        reader = with_pdf_text(service, pdf_text)  # the PDF is written onto the upload: no page images kept
        pages = ocr_in_budget(reader, budget, doc, filename, limits.request_timeout_s, keep_images=False)
    result = Document(pages=pages, source=filename)
    if fmt.value == "pdf":  # the text layer goes onto the uploaded original
        file.file.seek(0)
        data = file.file.read()
        return pdf_response(data, result, filename, mode=pdf_text, password=read.password, dpi=read.dpi)
    return response(result, fmt.value, filename)
