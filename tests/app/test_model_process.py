"""The OCR models in a process of their own (``models.process``, the default of ``vision serve``): the same
answers as in-process, per-request option sets built in the child, niced, and a child that dies is replaced."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import _app_media as _media
import psutil
import pytest
from conftest import service_settings
from fastapi.testclient import TestClient

from vision.app.api import create_app

SHAPES = [[256, 256], [256, 192], [192, 256]]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("model-process")
    settings = service_settings(
        tmp, models={"process": True, "torch_threads": 1, "det_input_shapes": SHAPES}, worker_nice=5
    )
    with TestClient(create_app(settings)) as c:
        yield c


def _child(client: TestClient) -> psutil.Process:
    return psutil.Process(client.app.state.runtime.ocr.predictor.process.pid)


def test_ocr_runs_in_a_niced_child_process(client: TestClient) -> None:
    child = _child(client)
    assert child.pid != os.getpid() and child.is_running()
    if sys.platform.startswith("linux"):
        assert child.nice() >= psutil.Process().nice() + 5
    data = _media.png(["Total 42.00", "Invoice 2024"])
    first = client.post("/v1/ocr", files={"file": ("page.png", data)})
    assert first.status_code == 200, first.text
    again = client.post("/v1/ocr", files={"file": ("page.png", data)})
    assert again.json() == first.json()  # one model, deterministic
    assert client.get("/readyz").status_code == 200


def test_option_sets_are_served_by_the_child(client: TestClient) -> None:
    data = _media.png(["Total 42.00"])
    for fields in ({"rotated": "true"}, {"orientation": "true", "lang": "de"}):
        response = client.post("/v1/ocr", files={"file": ("page.png", data)}, data=fields)
        assert response.status_code == 200, response.text
    keys = {service.predictor.key for service in client.app.state.runtime.ocr._langs.values()}
    assert keys == {((), (("assume_straight_pages", False),)), (("de",), (("detect_orientation", True),))}


def test_a_dead_child_fails_its_batch_and_is_replaced(client: TestClient) -> None:
    data = _media.png(["Total 42.00"])
    old = _child(client)
    os.kill(old.pid, signal.SIGKILL)
    old.wait(10)
    first = client.post("/v1/ocr", files={"file": ("page.png", data)})
    assert first.status_code in (200, 503)  # the batch it was in failed: retry (the child is back)
    if first.status_code == 503:
        assert first.json()["error"] == "overloaded" and first.headers["Retry-After"] == "1"
    assert client.post("/v1/ocr", files={"file": ("page.png", data)}).status_code == 200
    assert _child(client).pid != old.pid


def test_closing_the_app_stops_the_child(tmp_path: Path) -> None:
    settings = service_settings(tmp_path, models={"process": True, "torch_threads": 1, "det_input_shapes": SHAPES})
    with TestClient(create_app(settings)) as c:
        child = _child(c)
    deadline = time.monotonic() + 10
    while child.is_running() and child.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
