"""``Depends`` providers: the objects built once in the app's lifespan, the API key check, request options.

Tests replace any of these with ``app.dependency_overrides[provider] = ...``. They are ``async``: they do no
blocking work, and FastAPI runs a plain ``def`` dependency in the thread pool, a round trip through a
worker thread (and a thread-pool slot, which long OCR requests may all hold) for every one of them.
"""

from __future__ import annotations

import hmac
from typing import Annotated, Literal

from fastapi import Depends, Form, Query, Request, Security
from fastapi.security import APIKeyHeader

from vision.app.api.documents import ReadOptions, parse_pages
from vision.app.api.errors import ApiError
from vision.app.api.job_service import JobService
from vision.app.api.runtime import OcrService, Runtime, SamService
from vision.app.api.schemas import OcrFormat
from vision.app.api.settings import LimitSettings, ServiceSettings
from vision.io.budget import PixelBudget

__all__ = [
    "get_budget",
    "get_jobs",
    "get_limits",
    "get_ocr",
    "get_runtime",
    "get_sam",
    "get_settings",
    "ocr_format",
    "ocr_geometry",
    "read_options",
    "require_api_key",
]

_api_key_header = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    description="required on /v1/* when the server is configured with an API key",
)


async def get_runtime(request: Request) -> Runtime:
    """The predictors and batcher built in the lifespan."""
    return request.app.state.runtime


async def get_settings(request: Request) -> ServiceSettings:
    return request.app.state.settings


async def get_limits(settings: Annotated[ServiceSettings, Depends(get_settings)]) -> LimitSettings:
    return settings.limits


async def get_ocr(runtime: Annotated[Runtime, Depends(get_runtime)]) -> OcrService:
    return runtime.ocr


async def get_budget(runtime: Annotated[Runtime, Depends(get_runtime)]) -> PixelBudget:
    """The process's decoded-pixel budget."""
    return runtime.budget


async def get_sam(runtime: Annotated[Runtime, Depends(get_runtime)]) -> SamService:
    if runtime.sam is None:
        raise ApiError(404, "segmentation_unavailable", "no SAM checkpoint is configured on this server")
    return runtime.sam


async def get_jobs(request: Request) -> JobService:
    return request.app.state.jobs


async def require_api_key(
    key: Annotated[str | None, Security(_api_key_header)],
    settings: Annotated[ServiceSettings, Depends(get_settings)],
) -> None:
    """401 unless ``X-API-Key`` matches the configured key (no-op when none is configured)."""
    if settings.api_key is None:
        return
    expected = settings.api_key.get_secret_value().encode()
    if key is None or not hmac.compare_digest(key.encode(), expected):
        raise ApiError(
            401, "unauthorized", "missing or invalid X-API-Key header", headers={"WWW-Authenticate": "APIKey"}
        )


async def ocr_format(
    format_query: Annotated[OcrFormat | None, Query(alias="format")] = None,
    format_form: Annotated[OcrFormat | None, Form(alias="format")] = None,
) -> OcrFormat:
    """Output format from the query string or the form (query wins); JSON by default."""
    return format_query or format_form or OcrFormat.json


_LANG_DOC = "the document's languages, e.g. 'de' or 'de+fr' (picks the recognizer's lexicons; default English)"


async def ocr_lang(
    lang_query: Annotated[str | None, Query(alias="lang", max_length=100, description=_LANG_DOC)] = None,
    lang_form: Annotated[str | None, Form(alias="lang", max_length=100, description=_LANG_DOC)] = None,
) -> str | None:
    """The ``lang`` option from the query string or the form (query wins); 422 when unknown."""
    from vision.predictors.recognition.languages import parse_lang

    lang = lang_query if lang_query is not None else lang_form
    try:
        parse_lang(lang)
    except ValueError as exc:
        raise ApiError(422, "invalid_lang", str(exc)) from exc
    return lang or None


_ORIENTATION_DOC = (
    "turn pages rotated by 90, 180 or 270 degrees upright before reading them (the CLI's "
    "--detect-orientation; default: the server's setting, off)"
)
_ROTATED_DOC = (
    "skewed pages and rotated lines: detect rotated word boxes (the CLI's --rotated; words get a polygon; "
    "default: the server's setting, straight boxes)"
)


_OUTLINES_DOC = (
    "give each word its detected region as a polygon of up to 32 points (the CLI's --outlines; words get an "
    "outline that follows a curved baseline; default: the server's setting, off)"
)


_PHOTO_DOC = (
    "the page-versus-photo gate (the CLI's --photo): auto reads photos with the photo detector and drops "
    "lone glyphs there, on treats every page as a photo, off none (default: the server's setting, auto)"
)
PhotoField = Literal["auto", "on", "off"]


async def ocr_geometry(
    orientation_query: Annotated[bool | None, Query(alias="orientation", description=_ORIENTATION_DOC)] = None,
    orientation_form: Annotated[bool | None, Form(alias="orientation", description=_ORIENTATION_DOC)] = None,
    rotated_query: Annotated[bool | None, Query(alias="rotated", description=_ROTATED_DOC)] = None,
    rotated_form: Annotated[bool | None, Form(alias="rotated", description=_ROTATED_DOC)] = None,
    outlines_query: Annotated[bool | None, Query(alias="outlines", description=_OUTLINES_DOC)] = None,
    outlines_form: Annotated[bool | None, Form(alias="outlines", description=_OUTLINES_DOC)] = None,
    photo_query: Annotated[PhotoField | None, Query(alias="photo", description=_PHOTO_DOC)] = None,
    photo_form: Annotated[PhotoField | None, Form(alias="photo", description=_PHOTO_DOC)] = None,
) -> dict[str, bool | str]:
    """``orientation``, ``rotated``, ``outlines`` and ``photo`` (query or form, the query wins) as the
    :class:`OCROptions`
    fields they set (:func:`~vision.pipelines.ocr.options.orientation_changes`; ``photo`` as its mode);
    options not given are left out."""
    from vision.pipelines.ocr.options import orientation_changes

    changes: dict[str, bool | str] = dict(orientation_changes(
        detect_orientation=orientation_query if orientation_query is not None else orientation_form,
        rotated=rotated_query if rotated_query is not None else rotated_form,
        outlines=outlines_query if outlines_query is not None else outlines_form,
    ))
    photo = photo_query if photo_query is not None else photo_form
    if photo is not None:
        changes["photo"] = photo
    return changes


_PAGES_DOC = "PDF pages to read, 1-based: '1-3,7' (default: all)"
_DPI_DOC = "PDF rendering resolution"


async def read_options(
    limits: Annotated[LimitSettings, Depends(get_limits)],
    pages_query: Annotated[str | None, Query(alias="pages", max_length=200, description=_PAGES_DOC)] = None,
    pages_form: Annotated[str | None, Form(alias="pages", max_length=200, description=_PAGES_DOC)] = None,
    dpi_query: Annotated[float | None, Query(alias="dpi", ge=36, le=600, description=_DPI_DOC)] = None,
    dpi_form: Annotated[float | None, Form(alias="dpi", ge=36, le=600, description=_DPI_DOC)] = None,
    password: Annotated[str | None, Form(max_length=1000, description="PDF password (form only)")] = None,
) -> ReadOptions:
    """How to read the upload, from query parameters or form fields (query wins)."""
    spec = pages_query if pages_query is not None else pages_form
    dpi = dpi_query if dpi_query is not None else dpi_form
    return ReadOptions(pages=parse_pages(spec, limits.job_max_pages), dpi=dpi or 144.0, password=password)
