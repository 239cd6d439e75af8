"""Per-request ``orientation``, ``rotated`` and ``outlines`` on ``POST /v1/ocr`` (the CLI's
``--detect-orientation``, ``--rotated`` and ``--outlines``): mapped onto :class:`OCROptions`, served by a predictor sharing the server's models, cached
per option set (bounded), documented in the OpenAPI schema."""

from __future__ import annotations

from typing import Any

import _app_media as _media
import pytest
from fastapi.testclient import TestClient

from vision.app.api.runtime import OcrService
from vision.io import DocumentFile
from vision.pipelines.ocr.options import OCROptions, options_with, orientation_changes


def _expected(predictor: Any, data: bytes, **changes: bool) -> dict:
    pages = list(DocumentFile.from_path(data))
    for page in pages:
        page.source = "page.png"
    doc = predictor.with_options(**changes)(pages)
    doc.source = "page.png"
    return doc.export()


def test_options_map_onto_ocr_options() -> None:
    assert orientation_changes() == {}
    assert orientation_changes(detect_orientation=True, rotated=True) == {
        "detect_orientation": True,
        "assume_straight_pages": False,
    }
    options = options_with(OCROptions(), **orientation_changes(detect_orientation=True, rotated=False))
    assert options.detect_orientation and options.assume_straight_pages
    assert orientation_changes(outlines=True) == {"outlines": True}


def test_predictor_with_options_shares_the_models(predictor: Any) -> None:
    assert predictor.with_options(detect_orientation=False) is predictor  # unchanged: itself
    rotated = predictor.with_options(assume_straight_pages=False, detect_orientation=True)
    assert not rotated.options.assume_straight_pages and rotated.options.detect_orientation
    assert "orientation" in rotated.pipeline.names and "deskew" in rotated.pipeline.names
    det, base_det = rotated.pipeline["detect"].predictor, predictor.pipeline["detect"].predictor
    assert det.model is base_det.model and det is not base_det
    assert not det.straight and base_det.straight  # the server's predictor is not changed
    assert rotated.pipeline["recognize"].predictor is predictor.pipeline["recognize"].predictor
    with pytest.raises(TypeError, match="cannot change per call"):
        predictor.with_options(reco_batch_size=2)


@pytest.mark.parametrize(
    ("fields", "changes"),
    [
        ({"orientation": "true"}, {"detect_orientation": True}),
        ({"rotated": "true"}, {"assume_straight_pages": False}),
        ({"orientation": "1", "rotated": "yes"}, {"detect_orientation": True, "assume_straight_pages": False}),
        ({"outlines": "true"}, {"outlines": True}),
    ],
)
def test_fields_read_with_those_options(client: TestClient, predictor: Any, fields: dict, changes: dict) -> None:
    data = _media.png(["Total 42.00", "Invoice 2024"])
    expected = _expected(predictor, data, **changes)
    for kwargs in ({"data": fields}, {"params": fields}):
        response = client.post("/v1/ocr", files={"file": ("page.png", data)}, **kwargs)
        assert response.status_code == 200, response.text
        assert response.json() == expected
    (variant,) = client.app.state.runtime.ocr._langs.values()  # both requests: one predictor, kept
    assert {k: getattr(variant.predictor.options, k) for k in changes} == changes
    names = variant.predictor.pipeline.names
    assert ("orientation" in names) == changes.get("detect_orientation", False)
    assert ("deskew" in names) == (not changes.get("assume_straight_pages", True))
    assert variant.predictor.pipeline["detect"].predictor.outlines == changes.get("outlines", False)


def test_query_wins_and_false_is_the_server_default(client: TestClient, predictor: Any) -> None:
    data = _media.png(["Total 42.00"])
    plain = client.post("/v1/ocr", files={"file": ("page.png", data)}).json()
    off = client.post(
        "/v1/ocr", files={"file": ("page.png", data)}, params={"rotated": "false"}, data={"rotated": "true"}
    )
    assert off.status_code == 200 and off.json() == plain


def test_bad_values_are_422(client: TestClient) -> None:
    data = _media.png(["Total 42.00"])
    response = client.post("/v1/ocr", files={"file": ("page.png", data)}, params={"orientation": "maybe"})
    assert response.status_code == 422 and response.json()["error"] == "invalid_request"


def test_option_sets_are_cached_and_bounded(predictor: Any) -> None:
    service = OcrService(predictor, max_wait_s=0)
    try:
        assert service.variant() is service and service.variant(detect_orientation=False) is service
        first = service.variant(detect_orientation=True)
        assert service.variant(detect_orientation=True) is first
        assert service.variant(lang="de", assume_straight_pages=False).predictor.options.lang == "de"
        assert len(service._langs) == 2
        for lang in ("de", "fr", "es", "it", "nl", "pt", "da", "sv", "nb", "pl"):
            for rotated in (False, True):
                service.variant(lang=lang, assume_straight_pages=not rotated)
        assert len(service._langs) == OcrService.MAX_VARIANTS
        assert first not in service._langs.values()  # the least recently used was retired: idle, it stops
        for thread in first.batcher._threads:
            thread.join(10)
        assert not first.batcher.alive
    finally:
        service.close()


def test_a_retired_option_set_answers_what_it_was_given(predictor: Any) -> None:
    """Evicting an option set past MAX_VARIANTS never fails its queued or in-flight requests; a set used
    recently is kept over an older one."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    gate = threading.Event()

    class Slow:
        def __init__(self, inner: Any) -> None:
            self.inner, self.options = inner, inner.options

        def with_options(self, **changes: Any) -> Slow:
            return Slow(self.inner.with_options(**changes))

        def with_lang(self, lang: str) -> Slow:
            return Slow(self.inner.with_lang(lang))

        def __call__(self, pages: Any) -> Any:
            gate.wait(10)
            return self.inner(pages)

    page = list(DocumentFile.from_path(_media.png(["Total 42.00"])))[0]
    service = OcrService(Slow(predictor), max_wait_s=0)
    try:
        busy = service.variant(detect_orientation=True)
        with ThreadPoolExecutor(3) as pool:
            pending = [pool.submit(busy.pages, [page], 30) for _ in range(3)]  # one runs, two queue
            time.sleep(0.2)
            kept = service.variant(lang="de")
            for lang in ("cs", "da", "es", "fr", "hr", "hu", "it", "nb", "nl", "pl", "pt", "ro", "sk", "sl", "sv"):
                service.variant(lang=lang)
                service.variant(lang="de")  # used again: stays
            assert busy not in service._langs.values() and kept in service._langs.values()
            gate.set()
            assert all(len(f.result(30)) == 1 for f in pending)
    finally:
        gate.set()
        service.close()


def test_openapi_documents_the_options(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    operation = schema["paths"]["/v1/ocr"]["post"]
    query = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
    for name, words in (("orientation", "--detect-orientation"), ("rotated", "--rotated")):
        assert words in query[name]["description"]
        assert {"type": "boolean"} in query[name]["schema"]["anyOf"]
    ref = operation["requestBody"]["content"]["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[1]
    form = schema["components"]["schemas"][ref]["properties"]
    assert "--detect-orientation" in form["orientation"]["description"]
    assert "--rotated" in form["rotated"]["description"]


def test_jobs_take_the_same_options(client: TestClient, predictor: Any) -> None:
    import time

    data = _media.png(["Total 42.00", "Invoice 2024"])
    expected = _expected(predictor, data, detect_orientation=True, assume_straight_pages=False)
    submitted = client.post(
        "/v1/jobs", files={"file": ("page.png", data)}, data={"orientation": "true", "rotated": "true"}
    )
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    deadline = time.monotonic() + 60
    while client.get(f"/v1/jobs/{job_id}").json()["status"] in ("queued", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    result = client.get(f"/v1/jobs/{job_id}/result").json()
    assert result["pages"] == expected["pages"]
    (variant,) = client.app.state.runtime.ocr._langs.values()  # the job ran on that option set's predictor
    options = variant.predictor.options
    assert options.detect_orientation and not options.assume_straight_pages


def test_service_replicas_map_onto_ocr_options_and_stop_with_the_service() -> None:
    """``models.replicas`` is ``OCROptions.replicas``; closing the service stops the predictor's replicas."""
    from vision.app.api.settings import ModelSettings

    assert ModelSettings(device="cpu").ocr_options().replicas == 1
    assert ModelSettings(replicas=4, device="cpu").ocr_options().replicas == 4
    with pytest.raises(ValueError):
        ModelSettings(replicas=0)

    class Pooled:
        closed = False

        def __call__(self, pages: Any) -> Any:
            raise AssertionError("not called")

        def close(self) -> None:
            self.closed = True

    predictor = Pooled()
    OcrService(predictor).close()
    assert predictor.closed


def test_photo_mode_per_request(client: TestClient, predictor: Any) -> None:
    """``photo`` (the CLI's ``--photo``) picks the gate's mode per request; the server's own mode is no
    variant, and an unknown mode is a 422."""
    data = _media.png(["Total 42.00", "Invoice 2024"])
    runtime = client.app.state.runtime.ocr
    same = client.post("/v1/ocr", files={"file": ("page.png", data)}, params={"photo": "auto"})
    assert same.status_code == 200 and not runtime._langs  # the server's mode: its own predictor
    expected = _expected(predictor, data, photo="off")
    for kwargs in ({"data": {"photo": "off"}}, {"params": {"photo": "off"}}):
        response = client.post("/v1/ocr", files={"file": ("page.png", data)}, **kwargs)
        assert response.status_code == 200, response.text
        assert response.json() == expected
    (variant,) = runtime._langs.values()
    assert variant.predictor.options.photo.mode == "off" and "photo" not in variant.predictor.pipeline.names
    bad = client.post("/v1/ocr", files={"file": ("page.png", data)}, params={"photo": "maybe"})
    assert bad.status_code == 422
    schema = client.get("/openapi.json").json()["paths"]["/v1/ocr"]["post"]
    (param,) = [p for p in schema["parameters"] if p["name"] == "photo"]
    assert "--photo" in param["description"]


def test_service_replicas_default_to_a_few_on_a_gpu(monkeypatch) -> None:
    """Not set: :data:`SERVICE_GPU_REPLICAS` on a CUDA device with room for them, fewer where its memory
    holds fewer, 1 on a CPU."""
    import os

    import torch

    from vision.app.api.settings import SERVICE_GPU_REPLICAS, ModelSettings

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=None: (79 * 1024**3, 80 * 1024**3))
    assert ModelSettings(device="cuda").ocr_options().replicas == SERVICE_GPU_REPLICAS == 4
    assert ModelSettings(device="cuda", replicas=2).ocr_options().replicas == 2
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=None: (13 * 1024**3, 80 * 1024**3))
    assert ModelSettings(device="cuda").ocr_options().replicas == 2  # 13 GiB free / 6 GiB each
    assert ModelSettings(device="cpu").ocr_options().replicas == 1
