"""DynamicBatcher: merging, ordering, limits, timeouts and failure isolation (no models needed)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest

from vision.app.api.request_batcher import DynamicBatcher, QueueFull, QueueTimeout


class Recorder:
    """A batched function that records each call's items; ``gate`` holds calls until it is set."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.calls: list[list[int]] = []
        self.gate = gate
        self.started = threading.Event()

    def __call__(self, items: list[int]) -> list[int]:
        self.started.set()
        if self.gate is not None:
            assert self.gate.wait(10)
        if any(i < 0 for i in items):
            raise ValueError(f"negative item in {items}")
        self.calls.append(list(items))
        return [i * 10 for i in items]


@contextmanager
def _busy(
    max_batch_size: int, **options: Any
) -> Iterator[tuple[DynamicBatcher, Recorder, threading.Event, Future]]:
    """A batcher whose worker runs request ``[0]`` until ``gate`` is set, so later requests queue up.

    Yields ``(batcher, recorder, gate, future of [0])``; the batcher is closed on exit.
    """
    gate = threading.Event()
    fn = Recorder(gate)
    batcher = DynamicBatcher(fn, max_batch_size=max_batch_size, max_wait_s=0.0, **options)
    try:
        blocker = batcher.submit([0])
        assert fn.started.wait(5)
        yield batcher, fn, gate, blocker
    finally:
        gate.set()
        batcher.close()


def test_concurrent_requests_share_one_call_and_get_their_own_results() -> None:
    with _busy(16) as (batcher, fn, gate, blocker):
        futures = [batcher.submit([i, i + 100]) for i in range(1, 6)]
        gate.set()
        assert blocker.result(5) == [0]
        assert [f.result(5) for f in futures] == [[i * 10, (i + 100) * 10] for i in range(1, 6)]
        assert fn.calls == [[0], [1, 101, 2, 102, 3, 103, 4, 104, 5, 105]]


def test_batches_never_exceed_max_size_and_never_split_a_request() -> None:
    with _busy(4) as (batcher, fn, gate, _):
        futures = [batcher.submit(items) for items in ([1, 2], [3, 4], [5], [6, 7, 8, 9, 10], [11])]
        gate.set()
        results = [f.result(5) for f in futures]
        assert results == [[10, 20], [30, 40], [50], [60, 70, 80, 90, 100], [110]]
        # [6..10] is larger than max_size: it runs alone rather than being split.
        assert fn.calls[1:] == [[1, 2, 3, 4], [5], [6, 7, 8, 9, 10], [11]]


def test_waits_up_to_max_wait_for_more_requests() -> None:
    fn = Recorder()
    batcher = DynamicBatcher(fn, max_batch_size=8, max_wait_s=0.3)
    try:
        with ThreadPoolExecutor(4) as pool:
            first = pool.submit(batcher, [1])
            time.sleep(0.05)  # well inside the 0.3 s window
            second = pool.submit(batcher, [2])
            assert first.result(5) == [10] and second.result(5) == [20]
        assert fn.calls == [[1, 2]]
    finally:
        batcher.close()


def test_a_failing_request_does_not_fail_the_others_in_its_batch() -> None:
    with _busy(8) as (batcher, _, gate, _):
        good, bad, other = batcher.submit([1]), batcher.submit([-1]), batcher.submit([2])
        gate.set()
        assert good.result(5) == [10] and other.result(5) == [20]
        with pytest.raises(ValueError, match=r"negative item in \[-1\]"):
            bad.result(5)


def test_queue_limit_and_queue_timeout() -> None:
    with _busy(8, max_queue=3) as (batcher, fn, gate, running):
        queued = batcher.submit([1, 2])
        with pytest.raises(QueueFull, match=r"2 items already queued \(limit 3\)"):
            batcher.submit([3, 4])
        with pytest.raises(QueueTimeout):
            batcher([5], timeout=0.05)  # withdrawn: it never reaches the model
        gate.set()
        assert running.result(5) == [0] and queued.result(5) == [10, 20]
        assert [5] not in fn.calls and all(5 not in call for call in fn.calls)


def test_timeout_while_running_is_a_plain_timeout() -> None:
    gate = threading.Event()
    batcher = DynamicBatcher(Recorder(gate), max_batch_size=8, max_wait_s=0.0)
    try:
        with pytest.raises(TimeoutError) as info:
            batcher([1], timeout=0.2)
        assert not isinstance(info.value, QueueTimeout)
    finally:
        gate.set()
        batcher.close()


def test_close_fails_queued_requests_and_lets_the_running_batch_finish() -> None:
    gate = threading.Event()
    fn = Recorder(gate)
    batcher = DynamicBatcher(fn, max_batch_size=1, max_wait_s=0.0)
    running = batcher.submit([1])
    assert fn.started.wait(5)
    queued = batcher.submit([2])
    batcher.close(timeout=0.1)  # the running batch is still held by the gate
    with pytest.raises(RuntimeError, match="service shutting down"):
        queued.result(5)
    gate.set()
    assert running.result(5) == [10]
    assert not batcher.alive
    with pytest.raises(RuntimeError, match="closed"):
        batcher.submit([3])


def test_rejects_bad_settings_and_wrong_result_counts() -> None:
    with pytest.raises(ValueError):
        DynamicBatcher(lambda items: items, max_batch_size=0)
    batcher = DynamicBatcher(lambda items: items[:-1], max_batch_size=4, max_wait_s=0.0)
    try:
        with pytest.raises(RuntimeError, match="returned 1 results for 2 items"):
            batcher([1, 2], timeout=5)
    finally:
        batcher.close()


def test_workers_run_batches_at_once_and_retire_only_when_all_are_idle() -> None:
    """``workers=2``: a second batch runs while the first is held; retiring waits for both to finish."""
    gate = threading.Event()
    fn = Recorder(gate)
    batcher = DynamicBatcher(fn, max_batch_size=1, max_wait_s=0.0, workers=2)
    try:
        held = batcher.submit([1])
        assert fn.started.wait(5)
        fn.started.clear()
        second = batcher.submit([2])
        assert fn.started.wait(5)  # the other worker started while the first batch is still held
        assert not held.done() and not second.done()
        batcher.retire(idle_s=0.0)
        time.sleep(0.3)
        assert batcher.alive  # two batches are running: not idle
        gate.set()
        assert held.result(5) == [10] and second.result(5) == [20]
        deadline = time.monotonic() + 5
        while batcher.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not batcher.alive
    finally:
        gate.set()
        batcher.close()
    with pytest.raises(ValueError, match="workers"):
        DynamicBatcher(lambda items: items, workers=0)
