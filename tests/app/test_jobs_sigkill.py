"""Jobs survive a crash: a real server (uvicorn subprocess on loopback) is SIGKILLed mid-job and restarted.

A multi-page PDF job and a video job run together; the server is killed once both have checkpointed
some work, while an upload is arriving, restarted on the same job folder, and both jobs complete with
their full result: every page and every frame, in order, the checkpointed ones not recomputed. Nothing
is left behind: no staged upload of the dead process, no job folder without its job.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import _app_media as _media
import httpx

from vision.models._registry import default_model

READY_TIMEOUT_S = 120.0
JOB_TIMEOUT_S = 180.0
PAGES = 8  # pages of the PDF
FRAMES = 30  # seconds of video, sampled at 1 fps: long enough to be running still when the PDF is


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(config: Path, port: int, log: Path) -> subprocess.Popen:
    """``vision serve`` on 127.0.0.1:port; returns once /readyz answers 200."""
    with open(log, "ab") as out:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from vision.app.cli import main; sys.exit(main())",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--config",
                str(config),
                "--log-level",
                "warning",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2],
        )
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"server exited early:\n{log.read_text()[-3000:]}"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"server not ready in {READY_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


def _status(base: str, job_id: str) -> dict:
    return httpx.get(f"{base}/v1/jobs/{job_id}", timeout=10).json()


def _wait_progress(base: str, job_id: str, log: Path) -> None:
    """Until the job has checkpointed at least one page or frame."""
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while _status(base, job_id)["done"] < 1:
        assert time.monotonic() < deadline, f"no progress:\n{log.read_text()[-3000:]}"
        time.sleep(0.02)


def test_jobs_complete_after_sigkill_and_restart(tmp_path: Path) -> None:
    jobs_dir = tmp_path / "jobs"
    config = tmp_path / "vision.toml"
    # Small random models keep the CPU work low; every model call waits 250 ms for company (at most two
    # pages are ever queued, so the batch never fills): the jobs advance about 4 pages a second on any
    # machine, slow enough for one kill to land in the middle of both.
    config.write_text(
        f'ui = false\n[models]\ndet_weights = "random"\nreco_weights = "random"\n'
        f"det_input_shapes = [[128, 128], [96, 128], [128, 96]]\ntorch_threads = 1\n"
        f"[batching]\nmax_wait_ms = 250\n"
        f'[jobs]\ndir = "{jobs_dir}"\nchunk_pages = 1\nworkers = 2\n'
    )
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    clip_bytes, pdf_bytes = _media.video(seconds=float(FRAMES)), _media.scanned_pdf(PAGES)
    server = _start(config, port, log)
    try:
        assert httpx.get(f"{base}/readyz", timeout=10).json()["models"] == {
            "detection": f"{default_model('detection')} (random)",
            "recognition": f"{default_model('recognition')} (random)",
        }
        clip = httpx.post(
            f"{base}/v1/jobs",
            files={"file": ("clip.mp4", clip_bytes)},
            params={"fps": 1},
            timeout=30,
        )
        assert clip.status_code == 202
        ids = {"video": clip.json()["id"]}
        _wait_progress(base, ids["video"], log)  # the video is under way before the PDF starts, so that
        pdf = httpx.post(  # one kill interrupts both in the middle
            f"{base}/v1/jobs",
            files={"file": ("scan.pdf", pdf_bytes)},
            params={"dpi": 72},
            timeout=30,
        )
        assert pdf.status_code == 202
        ids["pdf"] = pdf.json()["id"]
        _wait_progress(base, ids["pdf"], log)
        upload = threading.Thread(target=_slow_upload, args=(base,), daemon=True)
        upload.start()  # the kill also lands in the middle of an upload
        time.sleep(0.5)
        server.send_signal(signal.SIGKILL)
        server.wait(30)
        killed_at = time.time()
        upload.join(30)
        # What a kill during the copy of an upload into the job store leaves: a staged file of a dead pid.
        staged = jobs_dir / "incoming" / f"{server.pid}-{'0' * 32}"
        staged.write_bytes(b"half an upload")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)
    before = {name: _job_row(jobs_dir, job_id) for name, job_id in ids.items()}
    assert all(row["status"] == "running" for row in before.values()), before  # interrupted mid-way
    assert 1 <= before["pdf"]["done"] < PAGES and 1 <= before["video"]["done"] < FRAMES, before
    server = _start(config, port, log)
    try:
        for name, total in (("pdf", PAGES), ("video", FRAMES)):
            final = _wait_done(base, ids[name], log)
            assert (final["status"], final["attempts"], final["done"], final["total"]) == (
                "succeeded",
                2,
                total,
                total,
            ), name
        document = httpx.get(f"{base}/v1/jobs/{ids['pdf']}/result", timeout=30).json()
        video = httpx.get(f"{base}/v1/jobs/{ids['video']}/result", timeout=30).json()
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.wait(60)
    assert not staged.exists() and list((jobs_dir / "incoming").iterdir()) == []  # no orphans
    folders = {p.name for p in jobs_dir.iterdir() if p.is_dir() and p.name != "incoming"}
    assert folders == set(ids.values())  # every job folder belongs to a job, and no half upload became one
    assert [p["page_idx"] for p in document["pages"]] == list(range(PAGES))
    assert {tuple(p["dimensions"]) for p in document["pages"]} == {(480, 640)}
    assert document["source"] == "scan.pdf" and all(p["source"] == "scan.pdf" for p in document["pages"])
    assert [p["timestamp"] for p in video["pages"]] == [float(t) for t in range(FRAMES)]
    assert [p["page_idx"] for p in video["pages"]] == list(range(FRAMES)) and video["source"] == "clip.mp4"
    for name, job_id in ids.items():  # pages done before the kill kept their checkpoints: not recomputed
        pages_dir = jobs_dir / job_id / "pages"
        kept = [pages_dir / f"{i:06d}.json" for i in range(before[name]["done"])]
        assert all(p.stat().st_mtime < killed_at for p in kept), name


def _slow_upload(base: str) -> None:
    """Stream a 20 MB upload at 1 MB a tenth of a second (the server is killed while it arrives)."""

    def body() -> Iterator[bytes]:
        yield b'--x\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\n\r\n'
        for _ in range(20):
            time.sleep(0.1)
            yield b"\0" * (1 << 20)
        yield b"\r\n--x--\r\n"

    try:
        httpx.post(
            f"{base}/v1/jobs",
            content=body(),
            headers={"content-type": "multipart/form-data; boundary=x"},
            timeout=30,
        )
    except httpx.TransportError:
        pass  # the server died under it


def _job_row(jobs_dir: Path, job_id: str) -> dict:
    import sqlite3

    with sqlite3.connect(jobs_dir / "jobs.sqlite3") as con:
        con.row_factory = sqlite3.Row
        return dict(con.execute("SELECT status, done, attempts FROM jobs WHERE id = ?", (job_id,)).fetchone())


def _wait_done(base: str, job_id: str, log: Path) -> dict:
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while True:
        body = _status(base, job_id)
        if body["status"] in ("succeeded", "failed", "cancelled"):
            return body
        assert time.monotonic() < deadline, f"job {job_id} stuck: {body}\n{log.read_text()[-3000:]}"
        time.sleep(0.1)
