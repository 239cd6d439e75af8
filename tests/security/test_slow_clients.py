"""Slow clients: a connection that trickles its request headers is closed by the server's protocol."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from vision.app.api.server_protocol import GuardedH11Protocol


class _QuickGuard(GuardedH11Protocol):
    header_timeout_s = 0.5


async def _hello(scope: dict, receive: object, send: object) -> None:
    if scope["type"] != "http":
        return
    start = {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    await send(start)  # type: ignore[operator]
    await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]


@pytest.fixture
def server() -> Iterator[int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        _hello, host="127.0.0.1", port=port, http=_QuickGuard, log_level="warning", lifespan="off"
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield port
    srv.should_exit = True
    thread.join(10)


def _closed_after(sock: socket.socket, trickle: bytes, limit_s: float) -> float | None:
    """Send ``trickle`` one byte every 0.1 s; seconds until the server closed the connection (a clean close or a
    reset, whichever the kernel reports first), or None."""
    start = time.monotonic()
    for byte in trickle:
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return time.monotonic() - start
        sock.settimeout(0.1)
        try:
            if sock.recv(1024) == b"":
                return time.monotonic() - start
        except TimeoutError:
            pass
        except OSError:  # ECONNRESET: the server closed with unread bytes in its buffer
            return time.monotonic() - start
        if time.monotonic() - start > limit_s:
            return None
    return None


def test_trickled_headers_are_cut_off(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as sock:
        closed = _closed_after(sock, b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 100, 5.0)
    assert closed is not None and closed < 2.5


def test_ordinary_requests_are_served(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
