"""/v1/jobs: documents and videos to completion, every state's answer, cancel, delete, resume."""

from __future__ import annotations

import threading
import time
from typing import Any

import _app_media as _media
import pytest
from fastapi.testclient import TestClient

from vision.errors import VisionError
from vision.io import DocumentFile
from vision.structures import Document

JOB_FIELDS = {
    "id",
    "kind",
    "status",
    "filename",
    "done",
    "total",
    "progress",
    "attempts",
    "error",
    "created_at",
    "updated_at",
}


def wait_status(client: TestClient, job_id: str, statuses: set[str], timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"/v1/jobs/{job_id}").json()
        if body["status"] in statuses:
            return body
        assert time.monotonic() < deadline, f"job stuck in {body}"
        time.sleep(0.05)


def page_by_page(predictor: Any, data: bytes, filename: str, **read: Any) -> Document:
    """The library's result with the job's chunking (one page per call), pages named like the upload."""
    pages = []
    for image in DocumentFile.from_path(data, **read):
        image.source = filename
        pages.extend(predictor([image]).pages)
    return Document(pages=pages, source=filename)


class Gate:
    """The real predictor behind a semaphore: each call takes one permit (``release(n)`` lets n through)."""

    def __init__(self, predictor: Any, permits: int = 0) -> None:
        self.predictor, self.permits, self.calls = predictor, threading.Semaphore(permits), 0

    def release(self, n: int = 1) -> None:
        self.permits.release(n)

    def __call__(self, pages: list) -> Any:
        assert self.permits.acquire(timeout=30), "gate never opened"
        self.calls += 1
        return self.predictor(pages)


def submit(client: TestClient, data: bytes, filename: str, **params: Any):
    return client.post("/v1/jobs", files={"file": (filename, data)}, params=params or None)


def test_document_job_from_submit_to_every_format(client: TestClient, predictor: Any) -> None:
    data = _media.scanned_pdf(3)
    response = submit(client, data, "scan.pdf", dpi=72)
    assert response.status_code == 202
    job = response.json()
    assert set(job) == JOB_FIELDS and response.headers["location"] == f"/v1/jobs/{job['id']}"
    assert {
        k: job[k] for k in ("kind", "status", "filename", "done", "total", "progress", "attempts", "error")
    } == {
        "kind": "document",
        "status": "queued",
        "filename": "scan.pdf",
        "done": 0,
        "total": 3,
        "progress": 0.0,
        "attempts": 0,
        "error": None,
    }
    final = wait_status(client, job["id"], {"succeeded", "failed"})
    assert (final["status"], final["done"], final["total"], final["progress"], final["attempts"]) == (
        "succeeded",
        3,
        3,
        1.0,
        1,
    )
    doc = page_by_page(predictor, data, "scan.pdf", dpi=72)
    url = f"/v1/jobs/{job['id']}/result"
    assert client.get(url).json() == doc.export()
    assert client.get(url, params={"format": "txt"}).text == doc.render() + "\n"
    assert client.get(url, params={"format": "hocr"}).text == doc.export_hocr()
    assert client.get(url, params={"format": "alto"}).text == doc.export_alto()
    pdf = client.get(url, params={"format": "pdf"})
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF-")
    assert pdf.headers["content-disposition"] == 'inline; filename="scan.pdf"'


def test_video_job_has_frames_and_a_timeline(client: TestClient) -> None:
    response = submit(client, _media.video(seconds=4.0), "clip.mp4", fps=1)
    assert response.status_code == 202 and response.json()["kind"] == "video"
    job_id = response.json()["id"]
    final = wait_status(client, job_id, {"succeeded", "failed"})
    assert (final["status"], final["done"], final["total"]) == ("succeeded", 4, 4)
    body = client.get(f"/v1/jobs/{job_id}/result").json()
    assert [p["timestamp"] for p in body["pages"]] == [0.0, 1.0, 2.0, 3.0]
    assert [p["page_idx"] for p in body["pages"]] == [0, 1, 2, 3] and body["source"] == "clip.mp4"
    doc = Document.from_dict(body)
    srt = client.get(f"/v1/jobs/{job_id}/result", params={"format": "srt"})
    assert srt.headers["content-type"] == "application/x-subrip" and srt.text == doc.to_srt()
    vtt = client.get(f"/v1/jobs/{job_id}/result", params={"format": "vtt"})
    assert vtt.headers["content-type"] == "text/vtt; charset=utf-8" and vtt.text == doc.to_vtt()
    pdf = client.get(f"/v1/jobs/{job_id}/result", params={"format": "pdf"})
    assert pdf.status_code == 413
    assert pdf.json() == {
        "error": "limit_exceeded",
        "message": "a searchable PDF is made for documents of at most "
        "20 pages (max_pages); fetch json, hocr or alto instead",
    }


def test_bad_submissions_and_unknown_jobs(client: TestClient) -> None:
    garbage = submit(client, b"\x00garbage" * 20, "x.pdf")
    assert garbage.status_code == 415 and garbage.json()["error"] == "unsupported_format"
    empty = submit(client, b"", "e.png")
    assert empty.status_code == 422
    assert empty.json() == {"error": "corrupt_file", "message": "e.png: empty file (0 bytes)"}
    assert client.get("/metrics").text.count('vision_jobs{status="queued"} 0.0') == 1  # nothing was queued
    unknown = "0123456789abcdef" * 2
    for method, url in (
        ("GET", f"/v1/jobs/{unknown}"),
        ("GET", f"/v1/jobs/{unknown}/result"),
        ("DELETE", f"/v1/jobs/{unknown}"),
    ):
        response = client.request(method, url)
        assert response.status_code == 404
        assert response.json() == {"error": "job_not_found", "message": f"no job {unknown}"}
    malformed = client.get("/v1/jobs/not-an-id")
    assert malformed.status_code == 422
    assert malformed.json()["message"] == "path.job_id: String should match pattern '^[0-9a-f]{32}$'"
    bad_format = client.get(f"/v1/jobs/{unknown}/result", params={"format": "docx"})
    assert bad_format.status_code == 422 and bad_format.json()["error"] == "invalid_request"


def test_running_cancelled_failed_and_deleted_jobs(make_client: Any, predictor: Any) -> None:
    gate = Gate(predictor)
    with make_client(serve=gate) as client:
        held = submit(client, _media.scanned_pdf(2), "held.pdf", dpi=72).json()["id"]
        doomed = submit(client, _media.scanned_pdf(1), "doomed.pdf", dpi=72).json()
        store = client.app.state.jobs.store
        store.input_path(store.get(doomed["id"])).write_bytes(b"no longer a PDF")  # breaks before it runs
        wait_status(client, held, {"running"})
        running = client.get(f"/v1/jobs/{held}/result")
        assert running.status_code == 409
        assert running.json() == {"error": "job_running", "message": f"job {held} is running"}
        cancelled = client.delete(f"/v1/jobs/{held}")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        gate.release(10)
        failed = wait_status(client, doomed["id"], {"failed", "succeeded"})
        assert failed["status"] == "failed"
        with pytest.raises(VisionError) as info:
            DocumentFile.from_path(b"no longer a PDF")
        reason = f"doomed.pdf: {info.value.reason}"
        assert failed["error"] == {"error": "unsupported_format", "message": reason}
        answer = client.get(f"/v1/jobs/{doomed['id']}/result")
        assert answer.status_code == 409
        assert answer.json() == {"error": "job_failed", "message": f"job {doomed['id']} is failed: {reason}"}
        assert client.get(f"/v1/jobs/{held}").json()["status"] == "cancelled"
        assert client.get(f"/v1/jobs/{held}/result").json()["error"] == "job_cancelled"
        assert client.delete(f"/v1/jobs/{held}").json()["status"] == "cancelled"  # now deleted
        assert client.get(f"/v1/jobs/{held}").status_code == 404
        assert not store.job_dir(held).exists()


def test_a_restart_resumes_from_the_last_checkpoint(make_client: Any, predictor: Any) -> None:
    data = _media.scanned_pdf(4)
    gate = Gate(predictor, permits=1)
    context = make_client(serve=gate)
    client = context.__enter__()
    job_id = submit(client, data, "long.pdf", dpi=72).json()["id"]
    deadline = time.monotonic() + 30
    while client.get(f"/v1/jobs/{job_id}").json()["done"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    runner = client.app.state.jobs.runner
    stopping = threading.Thread(target=context.__exit__, args=(None, None, None))
    stopping.start()  # graceful shutdown while page 2 waits at the gate
    while runner.alive:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    gate.release()  # page 2 finishes, its checkpoint sees the shutdown and hands the job back
    stopping.join(30)
    counter = Gate(predictor, permits=100)
    with make_client(serve=counter) as client:
        final = wait_status(client, job_id, {"succeeded", "failed"})
        assert (final["status"], final["attempts"], final["done"]) == ("succeeded", 2, 4)
        assert counter.calls == 2  # only pages 3 and 4 were left
        assert (
            client.get(f"/v1/jobs/{job_id}/result").json()
            == page_by_page(predictor, data, "long.pdf", dpi=72).export()
        )
