"""``POST /v1/ocr``: OCR an uploaded image or PDF synchronously, in any export format."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Response, UploadFile

from vision.app.api.batching import QueueFull, QueueTimeout
from vision.app.api.dependencies import get_limits, get_ocr, ocr_format, ocr_lang, read_options, require_api_key
from vision.app.api.documents import MEDIA_TYPES, ReadOptions, check_size, iter_pages, open_document, render
from vision.app.api.errors import ApiError
from vision.app.api.runtime import OcrService
from vision.app.api.schemas import DocumentOut, ErrorBody, OcrFormat
from vision.app.api.settings import LimitSettings
from vision.structures import Document

__all__ = ["ERROR_RESPONSES", "router", "run_ocr"]

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "the multipart body could not be parsed"},
    401: {"model": ErrorBody, "description": "missing or wrong X-API-Key"},
    413: {"model": ErrorBody, "description": "a limit was exceeded (bytes, pixels, pages, request time)"},
    415: {"model": ErrorBody, "description": "not an image, PDF or video we read"},
    422: {"model": ErrorBody, "description": "invalid options, or a corrupt or encrypted file"},
    503: {"model": ErrorBody, "description": "overloaded: too many pages queued; retry later"},
}

router = APIRouter(prefix="/v1", tags=["ocr"], dependencies=[Depends(require_api_key)])


def run_ocr(ocr: OcrService, pages: list[Any], timeout: float) -> list[Any]:
    """OCR pages through the batcher, mapping overload to 503 and a too-long run to 413."""
    try:
        return ocr.pages(pages, timeout=timeout)
    except (QueueFull, QueueTimeout) as exc:
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


@router.post(
    "/ocr",
    summary="OCR an image or a PDF",
    response_model=DocumentOut,
    responses={
        **ERROR_RESPONSES,
        200: {
            "content": {t: {} for f, t in MEDIA_TYPES.items() if f in OcrFormat.__members__},
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
    lang: Annotated[str | None, Depends(ocr_lang)] = None,
) -> Response:
    """Read every page (or the selected PDF pages), OCR them and return the document.

    Pages of concurrent requests are merged into model batches. Videos and documents over the
    synchronous page limit go to ``POST /v1/jobs``.
    """
    filename = file.filename or "upload"
    check_size(file, limits.max_bytes)
    with open_document(file.file, filename, limits.reader_limits(), read) as doc:
        if doc.kind == "video":
            raise ApiError(422, "use_jobs", f"{filename}: videos are processed as jobs: POST /v1/jobs")
        pages = list(iter_pages(doc, filename))
    try:
        service = service.for_lang(lang)
    except ValueError as exc:
        raise ApiError(422, "invalid_lang", str(exc)) from exc
    result = Document(pages=run_ocr(service, pages, limits.request_timeout_s), source=filename)
    return render(result, fmt.value, filename)
