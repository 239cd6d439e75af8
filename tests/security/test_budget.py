"""The decoded-pixel budget: per process, shared by requests; pages decoded chunk by chunk within it."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from _hostile import png_bytes

from vision.app.api.paging import chunk_indices
from vision.errors import LimitExceeded
from vision.io.budget import BudgetBusy, PixelBudget


def test_budget_waits_refuses_and_wakes() -> None:
    budget = PixelBudget(100)
    with pytest.raises(LimitExceeded, match="max_inflight_pixels"):
        budget.acquire(101)
    budget.acquire(80)
    with pytest.raises(BudgetBusy):
        budget.acquire(30, timeout=0.05)
    got = threading.Event()
    waiter = threading.Thread(target=lambda: (budget.acquire(30, timeout=5), got.set()))
    waiter.start()
    time.sleep(0.05)
    assert not got.is_set()
    budget.release(80)
    waiter.join(5)
    assert got.is_set() and budget.used == 30


def test_chunks_respect_pages_and_pixels() -> None:
    pixels = [10, 10, 10, 50, 10, 200, 10]
    assert chunk_indices(pixels, 0, max_pages=2, max_pixels=60) == [
        range(2),
        range(2, 4),
        range(4, 5),
        range(5, 6),
        range(6, 7),
    ]
    assert chunk_indices(pixels, 5, max_pages=8, max_pixels=1000) == [range(5, 7)]
    assert chunk_indices([], 0, 4, 10) == []


def test_a_page_over_the_whole_budget_is_413(make_client: Any) -> None:
    with make_client(limits={"max_inflight_pixels": 1000}) as client:
        response = client.post("/v1/ocr", files={"file": ("a.png", png_bytes(64, 48))})
    assert response.status_code == 413 and response.json()["error"] == "limit_exceeded"


def test_requests_wait_for_the_budget_and_give_up_with_503(make_client: Any, stub: Any) -> None:
    one_page = 64 * 48
    limits = {"max_inflight_pixels": 4 * one_page + 1, "request_timeout_s": 0.5}
    with make_client(limits=limits) as client:
        stub.hold()
        budget = client.app.state.runtime.budget
        first = threading.Thread(
            target=lambda: client.post("/v1/ocr", files={"file": ("a.png", png_bytes())})
        )
        first.start()
        assert stub.entered.wait(10)
        budget.acquire(3 * one_page)  # with the first page held, the budget has room for no other page
        second = client.post("/v1/ocr", files={"file": ("b.png", png_bytes())})
        budget.release(3 * one_page)
        stub.release()
        first.join(10)
        assert budget.used == 0
    assert second.status_code == 503 and second.json()["error"] == "overloaded"


def test_synchronous_requests_have_a_pixel_ceiling(make_client: Any) -> None:
    from _hostile import pdf_bytes

    with make_client(limits={"max_request_pixels": 2 * 400 * 200}) as client:  # two pages at 144 dpi
        three = client.post("/v1/ocr", files={"file": ("a.pdf", pdf_bytes(3))})
        two = client.post("/v1/ocr", files={"file": ("a.pdf", pdf_bytes(3))}, params={"pages": "1-2"})
    assert three.status_code == 413 and "max_request_pixels" in three.json()["message"]
    assert two.status_code == 200 and len(two.json()["pages"]) == 2
