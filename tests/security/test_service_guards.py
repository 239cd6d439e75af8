"""The service's guards: key before body, Host and Origin checks, body read timeout, probes off the pool."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import anyio.to_thread
from _hostile import png_bytes

from vision.app.api import create_app
from vision.app.api.security import SecurityMiddleware

KEY = "s3cret-key"


async def _asgi(app: Any, path: str, headers: dict[str, str], chunks: list[bytes] | None) -> tuple[int, bool]:
    """Send one POST straight to an ASGI app; returns the status and whether the body was read at all."""
    read = False
    sent: list[dict] = []
    pending = list(chunks or [])

    async def receive() -> dict:
        nonlocal read
        if chunks is None:
            await asyncio.sleep(3600)  # a client that never sends its body
        read = True
        body = pending.pop(0) if pending else b""
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 8000),
        "scheme": "http",
        "http_version": "1.1",
        "root_path": "",
    }
    await app(scope, receive, send)
    return sent[0]["status"], read


def _upload_headers(**extra: str) -> dict[str, str]:
    return {"host": "localhost", "content-type": "multipart/form-data; boundary=x", **extra}


def test_api_key_is_checked_before_the_body_is_read(tmp_path: Any, stub: Any) -> None:
    from _hostile import settings

    app = create_app(settings(tmp_path, api_key=KEY), predictor=stub)
    status, read = asyncio.run(_asgi(app, "/v1/ocr", _upload_headers(), [b"x" * 1000] * 50))
    assert (status, read) == (401, False)


def test_body_read_timeout_answers_408(tmp_path: Any, stub: Any) -> None:
    from _hostile import settings

    guard = SecurityMiddleware(
        create_app(settings(tmp_path, read_timeout_s=0.2), predictor=stub), settings(tmp_path)
    )
    guard.read_timeout_s = 0.2
    start = time.perf_counter()
    status, _ = asyncio.run(_asgi(guard, "/v1/ocr", _upload_headers(), None))
    assert status == 408 and time.perf_counter() - start < 5


def test_without_a_key_only_localhost_names_are_served(make_client: Any) -> None:
    with make_client(allowed_hosts=None) as client:
        rebinding = client.get("/healthz", headers={"host": "attacker.example:8000"})
        local = client.get("/healthz", headers={"host": "127.0.0.1:8000"})
    assert rebinding.status_code == 400 and rebinding.json()["error"] == "invalid_host"
    assert local.status_code == 200


def test_cross_site_form_post_is_refused(make_client: Any) -> None:
    files = {"file": ("a.png", png_bytes())}
    with make_client() as client:
        evil = client.post("/v1/ocr", files=files, headers={"origin": "http://attacker.example"})
        same = client.post("/v1/ocr", files=files, headers={"origin": "http://testserver"})
    assert evil.status_code == 403 and evil.json()["error"] == "forbidden_origin"
    assert same.status_code == 200


def test_metrics_need_the_key_unless_open(make_client: Any) -> None:
    with make_client(api_key=KEY) as client:
        closed = client.get("/metrics")
        keyed = client.get("/metrics", headers={"x-api-key": KEY})
        health = client.get("/healthz")
    with make_client(api_key=KEY, metrics_open=True) as client:
        opened = client.get("/metrics")
    assert (closed.status_code, keyed.status_code, opened.status_code, health.status_code) == (
        401,
        200,
        200,
        200,
    )
    assert closed.json()["error"] == "unauthorized"


def test_probes_answer_while_every_worker_thread_is_busy(make_client: Any, stub: Any) -> None:
    with make_client() as client:
        client.portal.call(
            lambda: setattr(anyio.to_thread.current_default_thread_limiter(), "total_tokens", 1)
        )
        stub.hold()
        busy = threading.Thread(target=lambda: client.post("/v1/ocr", files={"file": ("a.png", png_bytes())}))
        busy.start()
        assert stub.entered.wait(10)  # the only pool thread is inside OCR
        start = time.perf_counter()
        health, ready = client.get("/healthz"), client.get("/readyz")
        elapsed = time.perf_counter() - start
        stub.release()
        busy.join(10)
    assert (health.status_code, ready.status_code) == (200, 200) and elapsed < 2.0


def _raw_upload(filename: bytes, data: bytes) -> tuple[bytes, dict[str, str]]:
    """A multipart body written by hand: HTTP clients escape what an attacker sends raw."""
    body = (
        b'--x\r\nContent-Disposition: form-data; name="file"; filename="' + filename + b'"\r\n'
        b"Content-Type: image/png\r\n\r\n" + data + b"\r\n--x--\r\n"
    )
    return body, {"content-type": "multipart/form-data; boundary=x"}


def test_control_characters_in_file_names_are_a_json_422(make_client: Any, tmp_path: Any) -> None:
    body, headers = _raw_upload(b"a\x00.png", png_bytes())
    with make_client() as client:
        job = client.post("/v1/jobs", content=body, headers=headers)
        sync = client.post("/v1/ocr", content=body, headers=headers)
    for response in (job, sync):
        assert response.status_code == 422 and response.json()["error"] == "invalid_filename"
    leftovers = [p for p in (tmp_path / "jobs").iterdir() if p.is_dir() and p.name != "incoming"]
    assert leftovers == [] and list((tmp_path / "jobs" / "incoming").glob("*")) == []
