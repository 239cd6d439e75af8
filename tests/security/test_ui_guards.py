"""The UI obeys the REST limits: long documents become jobs, pages go through the pixel budget, and its
download folders are removed."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from _hostile import pdf_bytes

gr = pytest.importorskip("gradio")

from vision.app import ui
from vision.errors import LimitExceeded


def _progress(*args: Any, **kwargs: Any) -> None:
    pass


def test_long_documents_run_as_jobs(make_client: Any, tmp_path: Path) -> None:
    path = tmp_path / "long.pdf"
    path.write_bytes(pdf_bytes(5))
    with make_client(limits={"max_pages": 2}) as client:
        runtime, jobs = client.app.state.runtime, client.app.state.jobs
        with pytest.raises(gr.Error, match="over 2 \\(max_pages\\)"):
            ui._ocr_document(runtime, str(path), _progress, None)
        doc, video = ui._ocr_document(runtime, str(path), _progress, jobs)
        assert runtime.budget.used == 0
        submitted = jobs.store.counts()
    assert not video and len(doc.pages) == 5 and submitted["succeeded"] == 1


def test_short_documents_keep_page_images_within_the_budget(make_client: Any, tmp_path: Path) -> None:
    path = tmp_path / "short.pdf"
    path.write_bytes(pdf_bytes(2))
    one_page = {"max_inflight_pixels": 400 * 200 + 1}  # room for one page at 144 dpi
    with make_client(limits=one_page) as client, pytest.raises(LimitExceeded, match="max_inflight_pixels"):
        ui._ocr_document(client.app.state.runtime, str(path), _progress, client.app.state.jobs)


def test_download_folders_are_removed_when_old(make_client: Any, tmp_path: Path) -> None:
    path = tmp_path / "one.pdf"
    path.write_bytes(pdf_bytes(1))
    with make_client() as client:
        doc, _ = ui._ocr_document(client.app.state.runtime, str(path), _progress, None)
    first = Path(ui._downloads(doc, "one.pdf", False)[0]).parent
    assert {p.suffix for p in first.iterdir()} == {".json", ".md", ".html", ".pdf"}  # hOCR is .hocr.html
    old = time.time() - 2 * ui._KEEP_DOWNLOADS_S
    os.utime(first, (old, old))
    second = Path(ui._downloads(doc, "one.pdf", False)[0]).parent
    assert not first.exists() and second.is_dir() and second.parent == first.parent
