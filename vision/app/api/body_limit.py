"""Refuse oversized request bodies early, with the service's JSON error body (413).

A ``Content-Length`` over the limit is answered before the body is read; a body sent without one is
counted as it streams in and stopped at the limit (the route's form parser then sees the 413).
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vision.app.api.errors import ApiError, error_body

__all__ = ["BodyLimitMiddleware"]


class BodyLimitMiddleware:
    """Limit request bodies under ``prefix`` to ``max_body_bytes``."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, prefix: str = "/v1/") -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.prefix = prefix

    def _error(self) -> ApiError:
        return ApiError(
            413,
            "limit_exceeded",
            f"request body is over the limit of {self.max_body_bytes} bytes (max_bytes plus form overhead)",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            error = self._error()
            await JSONResponse(
                error_body(error.code, error.detail), status_code=413, headers={"Connection": "close"}
            )(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise self._error()
            return message

        await self.app(scope, counting_receive, send)
