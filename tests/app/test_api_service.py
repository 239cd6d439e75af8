"""Probes, metrics, OpenAPI, routing errors, dynamic batching through HTTP, settings and the CLI."""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import _app_media as _media
import pytest
from fastapi.testclient import TestClient

from vision.app.api.settings import ServiceSettings
from vision.app.cli import build_parser
from vision.app.cli.serve import export_settings


def _sample(text: str, name: str, labels: str = "") -> float:
    """One sample's value from Prometheus exposition text."""
    match = re.search(rf"^{re.escape(name)}{re.escape(labels)} (\S+)$", text, re.MULTILINE)
    assert match, f"{name}{labels} not in metrics"
    return float(match.group(1))


def test_probes(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "status": "ready",
        "models": {"ocr": "provided by the caller"},
        "queue_depth": 0,
        "segmentation": False,
        "video": True,
    }


def test_metrics_count_requests_batches_and_jobs(client: TestClient) -> None:
    assert client.post("/v1/ocr", files={"file": ("a.png", _media.png(["metrics"]))}).status_code == 200
    assert client.get("/v1/jobs/" + "f" * 32).status_code == 404
    response = client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert _sample(text, "vision_http_requests_total", '{method="POST",route="/v1/ocr",status="200"}') == 1
    assert (
        _sample(text, "vision_http_requests_total", '{method="GET",route="/v1/jobs/{job_id}",status="404"}')
        == 1
    )
    assert _sample(text, "vision_http_request_duration_seconds_count", '{method="POST",route="/v1/ocr"}') == 1
    assert (
        _sample(text, "vision_batch_pages_count", "") == 1
        and _sample(text, "vision_batch_pages_sum", "") == 1
    )
    assert _sample(text, "vision_queue_depth", "") == 0 and _sample(text, "vision_models_loaded", "") == 1
    assert _sample(text, "vision_jobs", '{status="queued"}') == 0


def test_concurrent_requests_are_merged_into_batches(make_client: Any) -> None:
    data = [_media.digital_pdf([[f"request {i}"]]) for i in range(8)]
    with make_client(batching={"max_wait_ms": 200, "max_size": 8}) as client:
        with ThreadPoolExecutor(8) as pool:
            responses = list(pool.map(lambda d: client.post("/v1/ocr", files={"file": ("r.pdf", d)}), data))
        metrics = client.get("/metrics").text
    assert [r.status_code for r in responses] == [200] * 8
    words = [[w["value"] for w in r.json()["pages"][0]["blocks"][0]["lines"][0]["words"]] for r in responses]
    assert words == [["request", str(i)] for i in range(8)]  # each request gets its own page back
    batches = _sample(metrics, "vision_batch_pages_count", "")
    assert _sample(metrics, "vision_batch_pages_sum", "") == 8
    assert batches < 8, "concurrent requests should share model batches"
    assert _sample(metrics, "vision_batch_requests_sum", "") == 8


def test_routing_errors_use_the_error_body(client: TestClient) -> None:
    missing = client.get("/nowhere")
    assert missing.status_code == 404 and missing.json() == {"error": "not_found", "message": "Not Found"}
    wrong = client.put("/v1/ocr")
    assert wrong.status_code == 405
    assert wrong.json() == {"error": "method_not_allowed", "message": "Method Not Allowed"}


def test_openapi_lists_the_endpoints(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert sorted(schema["paths"]) == [
        "/healthz",
        "/metrics",
        "/readyz",
        "/v1/jobs",
        "/v1/jobs/{job_id}",
        "/v1/jobs/{job_id}/result",
        "/v1/ocr",
        "/v1/schema/document.json",
    ]
    assert schema["components"]["securitySchemes"] == {
        "APIKeyHeader": {
            "type": "apiKey",
            "in": "header",
            "name": "X-API-Key",
            "description": "required on /v1/* when the server is configured with an API key",
        }
    }
    assert client.get("/docs").status_code == 200


def test_segment_route_needs_a_checkpoint(client: TestClient) -> None:
    assert client.post("/v1/segment", files={"file": ("a.png", _media.png(["x"]))}).status_code == 404


def test_settings_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = tmp_path / "vision.toml"
    toml.write_text(
        'api_key = "from-file"\n[limits]\nmax_pages = 3\nmax_bytes = 1000\n[batching]\nmax_size = 4\n'
    )
    monkeypatch.setenv("VISION_LIMITS__MAX_BYTES", "2000")
    settings = ServiceSettings(config_file=toml, batching={"max_size": 9})
    assert settings.api_key.get_secret_value() == "from-file"
    assert (settings.limits.max_pages, settings.limits.max_bytes) == (3, 2000)  # env beats the file
    assert settings.batching.max_size == 9  # arguments beat everything
    (tmp_path / "vision.json").write_text(json.dumps({"jobs": {"workers": 2}}))
    monkeypatch.setenv("VISION_CONFIG_FILE", str(tmp_path / "vision.json"))
    assert ServiceSettings().jobs.workers == 2
    limits = ServiceSettings(limits={"max_pages": 5, "job_max_pages": 50}).limits
    assert limits.reader_limits().max_pages == 5 and limits.reader_limits(job=True).max_pages == 50
    with pytest.raises(FileNotFoundError):
        ServiceSettings(config_file=tmp_path / "missing.toml")
    with pytest.raises(ValueError):
        ServiceSettings(limits={"max_bytes": 0})
    with pytest.raises(ValueError):
        ServiceSettings(limits={"max_byte": 10})  # typos are errors, not silently ignored


def test_cli_serve_and_ui_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VISION_CONFIG_FILE", "VISION_LIMITS__MAX_PAGES"):  # export_settings writes these:
        monkeypatch.setenv(name, "")  # recorded, so that the teardown restores them
        monkeypatch.delenv(name)
    config = tmp_path / "c.toml"
    config.write_text("[limits]\nmax_pages = 7\n")
    args = build_parser().parse_args(
        ["serve", "--port", "9001", "--workers", "2", "--config", str(config), "--max-pages", "4"]
    )
    assert (args.host, args.port, args.workers) == ("127.0.0.1", 9001, 2)
    export_settings(args)
    assert ServiceSettings().limits.max_pages == 4  # the flag beats the file
    ui = build_parser().parse_args(["ui", "--port", "7000"])
    assert (ui.host, ui.port, ui.config) == ("127.0.0.1", 7000, None)


def test_inference_never_blocks_the_event_loop(make_client: Any, predictor: Any) -> None:
    held = threading.Event()
    release = threading.Event()

    def slow(pages: list) -> Any:
        held.set()
        assert release.wait(30)
        return predictor(pages)

    with make_client(serve=slow) as client:
        worker = threading.Thread(
            target=lambda: client.post("/v1/ocr", files={"file": ("a.pdf", _media.digital_pdf([["x"]]))})
        )
        worker.start()
        try:
            assert held.wait(30)  # the model is busy with the first request...
            start = time.monotonic()
            assert client.get("/healthz").status_code == 200  # ...and the server still answers at once
            assert client.get("/readyz").json()["queue_depth"] == 0
            assert time.monotonic() - start < 2.0
        finally:
            release.set()
            worker.join(30)
