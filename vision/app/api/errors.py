"""One JSON error body for every failure: ``{"error": CODE, "message": TEXT}`` (+ ``detail`` for 422s).

``CODE`` is a stable machine-readable slug; ``TEXT`` is for people. Reader failures
(:class:`vision.errors.VisionError`) map to 413 (limits), 415 (unsupported format) or 422 (corrupt,
encrypted or otherwise unreadable input).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from vision.errors import (
    CorruptFile,
    InvalidPages,
    LimitExceeded,
    PasswordRequired,
    UnsupportedFormat,
    VisionError,
)

__all__ = ["ApiError", "error_body", "install_error_handlers", "vision_error_status"]

_VISION_ERRORS: tuple[tuple[type[VisionError], int, str], ...] = (
    (LimitExceeded, 413, "limit_exceeded"),
    (UnsupportedFormat, 415, "unsupported_format"),
    (PasswordRequired, 422, "password_required"),
    (InvalidPages, 422, "invalid_pages"),
    (CorruptFile, 422, "corrupt_file"),
    (VisionError, 422, "invalid_input"),
)


class ApiError(StarletteHTTPException):
    """An HTTP error with a stable ``code``; rendered as the service's JSON error body."""

    def __init__(
        self, status_code: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(status_code=status_code, detail=message, headers=headers)
        self.code = code


def error_body(code: str, message: str, detail: Any = None) -> dict[str, Any]:
    """The JSON body of every error response."""
    body: dict[str, Any] = {"error": code, "message": message}
    if detail is not None:
        body["detail"] = detail
    return body


def vision_error_status(exc: VisionError) -> tuple[int, str]:
    """HTTP status and error code for a reader or pipeline failure."""
    for cls, status, code in _VISION_ERRORS:
        if isinstance(exc, cls):
            return status, code
    raise AssertionError("unreachable: VisionError is the last entry")


def _slug(status: int) -> str:
    try:
        return HTTPStatus(status).phrase.lower().replace(" ", "_").replace("-", "_")
    except ValueError:
        return "error"


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = exc.code if isinstance(exc, ApiError) else _slug(exc.status_code)
    message = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
    return JSONResponse(error_body(code, message), status_code=exc.status_code, headers=exc.headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    detail = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        for e in exc.errors()
    ]
    first = detail[0] if detail else {"loc": [], "msg": "invalid request"}
    where = ".".join(str(p) for p in first["loc"])
    message = f"{where}: {first['msg']}" if where else str(first["msg"])
    return JSONResponse(jsonable_encoder(error_body("invalid_request", message, detail)), status_code=422)


async def _vision_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, VisionError)
    status, code = vision_error_status(exc)
    return JSONResponse(error_body(code, str(exc)), status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    """Route HTTP, validation and reader errors through :func:`error_body`."""
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(VisionError, _vision_error)
