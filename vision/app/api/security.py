"""Request guards that run before any route reads a body: Host allow-list, Origin check, API key, and a
read timeout on request bodies.

* Host: with no API key configured the service answers only to localhost names (a web page cannot drive
  it through DNS rebinding); ``allowed_hosts`` widens or narrows that.
* Origin: a browser request from another site to ``/v1/*`` or ``/metrics`` is refused (403), so a form
  POST from any web page cannot submit work; ``allowed_origins`` lists sites that may.
* API key: checked from the headers, so an anonymous 50 MB upload is refused before its body is read.
* Body reads: each piece of a request body must arrive within ``read_timeout_s`` (408), so a slow client
  cannot hold a worker thread forever.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

import anyio
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vision.app.api.errors import ApiError, error_body
from vision.app.api.settings import ServiceSettings

__all__ = ["LOCAL_HOSTS", "SecurityMiddleware", "check_filename"]

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def _host_name(host: str) -> str:
    """``example.org:8000`` -> ``example.org``; ``[::1]:8000`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def check_filename(name: str | None) -> str:
    """The upload's file name, refusing control characters (a NUL would reach file system calls)."""
    name = name or "upload"
    if any(ord(c) < 32 or ord(c) == 127 for c in name) or len(name) > 1000:
        raise ApiError(422, "invalid_filename", "the file name contains control characters or is too long")
    return name


class SecurityMiddleware:
    """Host, Origin and API-key checks from the headers alone, and body read timeouts (pure ASGI)."""

    def __init__(
        self, app: ASGIApp, settings: ServiceSettings, protected: tuple[str, ...] = ("/v1/",)
    ) -> None:
        self.app = app
        self.key = None if settings.api_key is None else settings.api_key.get_secret_value().encode()
        hosts = settings.allowed_hosts
        if hosts is None:
            hosts = ["*"] if self.key is not None else list(LOCAL_HOSTS)
        self.any_host = "*" in hosts
        self.hosts = {h.lower() for h in hosts}
        self.origins = set(settings.allowed_origins)
        self.protected = protected if settings.metrics_open else (*protected, "/metrics")
        self.read_timeout_s = settings.read_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        error = self._refusal(scope, headers)
        if error is not None:
            body = error_body(error.code, error.detail)
            await JSONResponse(
                body, status_code=error.status_code, headers={**(error.headers or {}), "Connection": "close"}
            )(scope, receive, send)
            return
        await self.app(scope, self._timed(receive), send)

    def _refusal(self, scope: Scope, headers: Headers) -> ApiError | None:
        host = headers.get("host", "")
        if not self.any_host and _host_name(host) not in self.hosts:
            return ApiError(400, "invalid_host", "this server does not answer to that Host (allowed_hosts)")
        path = scope["path"]
        if not path.startswith(self.protected):
            return None
        origin = headers.get("origin")
        if origin is not None and "*" not in self.origins and origin not in self.origins:
            parts = urlsplit(origin)
            if parts.netloc.lower() != host.lower() or parts.scheme not in ("http", "https"):
                return ApiError(
                    403, "forbidden_origin", f"requests from {origin} are not allowed (allowed_origins)"
                )
        if self.key is not None:
            given = headers.get("x-api-key", "").encode()
            if not hmac.compare_digest(given, self.key):
                return ApiError(
                    401,
                    "unauthorized",
                    "missing or invalid X-API-Key header",
                    headers={"WWW-Authenticate": "APIKey"},
                )
        return None

    def _timed(self, receive: Receive) -> Receive:
        timeout = self.read_timeout_s

        async def timed_receive() -> Message:
            try:
                with anyio.fail_after(timeout):
                    return await receive()
            except TimeoutError:
                raise ApiError(
                    408, "request_timeout", f"no request data for {timeout:g} s (read_timeout_s)"
                ) from None

        return timed_receive
