"""Jobs under attack: quotas, retention, secrets, orphans after a crash, repeated cancellation, bad pages."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import pytest
from _hostile import pdf_bytes, png_bytes

from vision.errors import PasswordRequired


def _wait(client: Any, job_id: str, statuses: tuple[str, ...], timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"/v1/jobs/{job_id}").json()
        if body["status"] in statuses or time.monotonic() > deadline:
            return body
        time.sleep(0.02)


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_job_count_quota_answers_429(make_client: Any, stub: Any) -> None:
    with make_client(jobs={"max_active": 1}) as client:
        stub.hold()
        first = client.post("/v1/jobs", files={"file": ("a.png", png_bytes())})
        second = client.post("/v1/jobs", files={"file": ("b.png", png_bytes())})
        stub.release()
    assert first.status_code == 202
    assert second.status_code == 429 and second.json()["error"] == "job_quota"


def test_job_storage_quota_answers_429(make_client: Any) -> None:
    data = png_bytes()
    with make_client(jobs={"max_stored_bytes": len(data) + 1}) as client:
        first = client.post("/v1/jobs", files={"file": ("a.png", data)})
        second = client.post("/v1/jobs", files={"file": ("b.png", data)})
    assert first.status_code == 202 and second.status_code == 429


def test_finished_jobs_expire(make_client: Any, tmp_path: Path) -> None:
    with make_client(jobs={"retention_s": 0.5}) as client:
        old = client.post("/v1/jobs", files={"file": ("a.png", png_bytes())}).json()["id"]
        assert _wait(client, old, ("succeeded",))["status"] == "succeeded"
        time.sleep(0.6)
        client.post("/v1/jobs", files={"file": ("b.png", png_bytes())})  # submitting sweeps expired jobs
        gone = client.get(f"/v1/jobs/{old}")
    assert gone.status_code == 404 and not (tmp_path / "jobs" / old).exists()


def test_pdf_passwords_never_reach_the_disk(make_client: Any, tmp_path: Path) -> None:
    secret = "pw-7f3e-SECRET"
    with make_client() as client:
        job = client.post(
            "/v1/jobs",
            files={"file": ("locked.pdf", pdf_bytes(2, password=secret))},
            data={"password": secret},
        ).json()
        done = _wait(client, job["id"], ("succeeded", "failed"))
        service = client.app.state.jobs
        held_after = dict(service._secrets)
    assert done["status"] == "succeeded" and done["total"] == 2
    assert held_after == {}  # dropped when the job ended
    for path in _files(tmp_path / "jobs"):
        assert secret.encode() not in path.read_bytes(), path


def test_an_encrypted_job_whose_password_is_gone_fails_with_password_required(make_client: Any) -> None:
    """After a restart the password (kept in memory only) is gone: the job fails cleanly, never hangs."""
    with make_client() as client:
        job_id = client.post("/v1/jobs", files={"file": ("a.png", png_bytes())}).json()["id"]
        service = client.app.state.jobs
        record = dataclasses.replace(service.store.get(job_id), options={"encrypted": True})
        with pytest.raises(PasswordRequired, match="kept in memory only"):
            service._read(record)


def test_orphans_of_a_crashed_process_are_removed_at_start(make_client: Any, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    (jobs / "incoming").mkdir(parents=True)
    staged = jobs / "incoming" / "999999999-0123456789abcdef"  # no such pid
    staged.write_bytes(b"half an upload")
    folder = jobs / ("ab" * 16)
    folder.mkdir()
    (folder / "input.png").write_bytes(b"x")
    os.utime(folder, (time.time() - 3600, time.time() - 3600))
    with make_client() as client:
        assert client.get("/healthz").status_code == 200
    assert not staged.exists() and not folder.exists()


def test_two_deletes_of_a_running_job_keep_its_files_until_it_stops(
    make_client: Any, stub: Any, tmp_path: Path
) -> None:
    with make_client() as client:
        stub.hold()
        job_id = client.post("/v1/jobs", files={"file": ("a.pdf", pdf_bytes(3))}).json()["id"]
        assert stub.entered.wait(10)
        first, second = client.delete(f"/v1/jobs/{job_id}"), client.delete(f"/v1/jobs/{job_id}")
        still_there = (tmp_path / "jobs" / job_id).is_dir()
        stub.release()
        deadline = time.monotonic() + 10
        while client.app.state.jobs.store.get(job_id).owner is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        third = client.delete(f"/v1/jobs/{job_id}")
        after = client.get(f"/v1/jobs/{job_id}")
    assert [r.status_code for r in (first, second, third)] == [200, 200, 200]
    assert first.json()["status"] == second.json()["status"] == "cancelled"
    assert still_there and after.status_code == 404 and not (tmp_path / "jobs" / job_id).exists()


def test_pages_out_of_range_are_422_invalid_pages(make_client: Any) -> None:
    data = pdf_bytes(2)
    with make_client() as client:
        sync = client.post("/v1/ocr", files={"file": ("a.pdf", data)}, params={"pages": "5"})
        job = client.post("/v1/jobs", files={"file": ("a.pdf", data)}, params={"pages": "2-9"})
    for response in (sync, job):
        assert response.status_code == 422 and response.json()["error"] == "invalid_pages", response.text
