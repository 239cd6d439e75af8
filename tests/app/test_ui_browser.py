"""The UI in a real browser: headless Chromium (Debian's, driven by Playwright) against a loopback server.

Upload the bundled sample page, press Read, and check what a person sees: the text (most of the sample's
words, read by the shipped models), a red box drawn on the page along each recognised word, and a JSON
download that holds exactly the words and text shown.
"""

from __future__ import annotations

import contextlib
import io
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import uvicorn
from conftest import service_settings
from PIL import Image
from playwright.sync_api import expect, sync_playwright

import vision
from vision.app.api import create_app
from vision.app.ui import BOX_COLOR, SAMPLE_PAGE
from vision.assets.make_sample import render_sample
from vision.structures import Document

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 120_000


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """Run ``app`` with uvicorn on a free loopback port in a thread; yields its base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def trained_predictor() -> Any:
    """The shipped models: the sample page must actually be read."""
    return vision.ocr_predictor(device="cpu")


def test_upload_the_sample_page_and_see_text_boxes_and_json(
    tmp_path: Path, trained_predictor: Any, one_torch_thread: None
) -> None:
    app = create_app(service_settings(tmp_path, ui=True), predictor=trained_predictor)
    with serve(app) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(accept_downloads=True)
            page.goto(f"{base}/ui/", timeout=TIMEOUT_MS)
            page.locator("#upload input[type=file]").set_input_files(str(SAMPLE_PAGE))
            # Gradio draws the file's stem and extension in separate spans, at times with a space between
            shown = re.compile(rf"{re.escape(SAMPLE_PAGE.stem)}\s*{re.escape(SAMPLE_PAGE.suffix)}")
            expect(page.locator("#upload")).to_contain_text(shown, timeout=TIMEOUT_MS)
            page.locator("#read").click()
            expect(page.locator('#downloads a[download$=".json"]')).to_be_visible(timeout=TIMEOUT_MS)
            text = page.locator("#text textarea").input_value()
            src = page.locator("#pages img").first.get_attribute("src")
            drawn = np.asarray(Image.open(io.BytesIO(page.request.get(src).body())).convert("RGB"))
            with page.expect_download(timeout=TIMEOUT_MS) as download:
                page.locator('#downloads a[download$=".json"]').click()
            doc = Document.from_json(Path(download.value.path()).read_text(encoding="utf-8"))
        finally:
            browser.close()
    words = doc.pages[0].words
    assert doc.source == SAMPLE_PAGE.name and text == doc.render()  # the text shown is the JSON's
    truth = Counter(word for word, _ in render_sample()[1])
    found = sum((Counter(w.value for w in words) & truth).values())
    assert found >= 0.6 * sum(truth.values()), (
        f"read {found} of {sum(truth.values())} words of the sample page"
    )
    height, width = drawn.shape[:2]
    assert (height, width) == doc.pages[0].dimensions == Image.open(SAMPLE_PAGE).size[::-1]
    top_middles = [
        (int(w.geometry[1] * height), round((w.geometry[0] + w.geometry[2]) / 2 * width)) for w in words
    ]
    on_edge = [
        bool((drawn[max(0, y - 1) : y + 3, x] == BOX_COLOR).all(axis=-1).any()) for y, x in top_middles
    ]
    assert sum(on_edge) >= 0.9 * len(on_edge), "a red box edge should run along the top of each word"
