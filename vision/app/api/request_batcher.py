"""Dynamic batching: concurrent requests are merged into one model call on a dedicated thread.

Each request submits a list of items (pages) and gets a :class:`concurrent.futures.Future` of the per-item
results. A worker thread takes the oldest request, waits at most ``max_wait_s`` for more while the batch
holds fewer than ``max_batch_size`` items, runs ``fn`` once on all of them and hands each request its slice.
Inference therefore never runs on the event loop. With one worker (the default) the model sees one caller;
``workers=N`` runs up to N batches at once, for an ``fn`` that spreads its calls over model replicas.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

__all__ = ["BatchObserver", "DynamicBatcher", "QueueFull", "QueueTimeout"]

T = TypeVar("T")
R = TypeVar("R")


class QueueFull(RuntimeError):
    """More items are queued than ``max_queue``: the caller should retry later."""


class QueueTimeout(TimeoutError):
    """The request timed out before the model started on it (the service is overloaded)."""


class BatchObserver(Protocol):
    """Receives batching measurements (implemented by :class:`vision.app.api.metrics.Metrics`)."""

    def observe_batch(self, items: int, requests: int, seconds: float) -> None: ...

    def set_queue_depth(self, items: int) -> None: ...


@dataclass
class _Request(Generic[T, R]):
    items: list[T]
    future: Future = field(default_factory=Future)


class DynamicBatcher(Generic[T, R]):
    """Run ``fn(items) -> results`` (one result per item, same order) over merged concurrent requests.

    Args:
        fn: the batched model call; it must return exactly one result per item.
        max_batch_size: most items per call. A single request larger than this runs alone.
        max_wait_s: how long the worker waits for more requests after the first one arrived.
        max_queue: most items waiting; :meth:`submit` raises :class:`QueueFull` beyond it.
        observer: optional sink for batch sizes, latencies and queue depth.
        name: thread name, for debugging.
        workers: batches run at once (threads calling ``fn``); 1 unless ``fn`` is thread-safe.
    """

    def __init__(
        self,
        fn: Callable[[list[T]], Sequence[R]],
        *,
        max_batch_size: int = 16,
        max_wait_s: float = 0.005,
        max_queue: int = 1024,
        observer: BatchObserver | None = None,
        name: str = "batcher",
        workers: int = 1,
    ) -> None:
        if max_batch_size < 1 or max_wait_s < 0 or max_queue < 1 or workers < 1:
            raise ValueError("max_batch_size, max_queue and workers must be >= 1 and max_wait_s >= 0")
        self._fn = fn
        self.max_batch_size = max_batch_size
        self.max_wait_s = max_wait_s
        self.max_queue = max_queue
        self._observer = observer
        self._queue: collections.deque[_Request[T, R]] = collections.deque()
        self._queued_items = 0
        self._cond = threading.Condition()
        self._closed = False
        self._retire_after: float | None = None  # idle seconds after which a retired batcher stops
        self._idle_since = time.monotonic()
        self._running = 0  # batches being run
        self._threads = [threading.Thread(target=self._loop, name=f"{name}-{k}" if workers > 1 else name,
                                          daemon=True) for k in range(workers)]
        for thread in self._threads:
            thread.start()

    @property
    def queued_items(self) -> int:
        """Items waiting for the model (not counting the batches being run)."""
        return self._queued_items

    @property
    def alive(self) -> bool:
        """Whether the worker threads are running."""
        return any(t.is_alive() for t in self._threads) and not self._closed

    def submit(self, items: Sequence[T]) -> Future:
        """Queue ``items``; the future resolves to their results (a list, same order)."""
        request: _Request[T, R] = _Request(list(items))
        with self._cond:
            if self._closed:
                raise RuntimeError("batcher is closed")
            if self._queue and self._queued_items + len(request.items) > self.max_queue:
                raise QueueFull(f"{self._queued_items} items already queued (limit {self.max_queue})")
            self._queue.append(request)
            self._queued_items += len(request.items)
            self._report_depth()
            self._cond.notify()
        return request.future

    def __call__(self, items: Sequence[T], timeout: float | None = None) -> list[R]:
        """Submit and wait up to ``timeout`` seconds.

        Raises:
            QueueFull: too many items are already waiting.
            QueueTimeout: the timeout passed while the request was still queued (it is withdrawn).
            TimeoutError: the timeout passed while the model ran on it (its result is dropped).
        """
        future = self.submit(items)
        try:
            return future.result(timeout=timeout)
        except TimeoutError:
            if future.cancel():
                raise QueueTimeout(f"still queued after {timeout} s") from None
            raise

    def close(self, timeout: float = 10.0) -> None:
        """Stop the workers after their running batches; queued requests fail with ``RuntimeError``."""
        with self._cond:
            self._closed = True
            pending, self._queue = list(self._queue), collections.deque()
            self._queued_items = 0
            self._cond.notify_all()
        for request in pending:
            if request.future.set_running_or_notify_cancel():
                request.future.set_exception(RuntimeError("service shutting down"))
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def retire(self, idle_s: float = 5.0) -> None:
        """Stop the workers once they have had nothing to do for ``idle_s`` seconds: queued requests, and any
        submitted meanwhile by a caller that still holds this batcher, are all answered (unlike
        :meth:`close`). Returns at once."""
        with self._cond:
            self._retire_after = idle_s
            self._cond.notify_all()

    def _report_depth(self) -> None:
        if self._observer is not None:
            self._observer.set_queue_depth(self._queued_items)

    def _take(self) -> list[_Request[T, R]] | None:
        """Block until a request arrives, then gather more until the batch is full or the wait ends (counted
        as running until :meth:`_loop` is done with it; ``None`` once closed)."""
        with self._cond:
            while not self._queue and not self._closed:
                if (self._retire_after is not None and not self._running
                        and time.monotonic() - self._idle_since >= self._retire_after):
                    self._closed = True  # retired and idle: later submissions get RuntimeError
                    self._cond.notify_all()
                    break
                self._cond.wait(timeout=1.0 if self._retire_after is None else
                                min(1.0, max(0.05, self._retire_after)))
            if self._closed:
                return None
            batch = [self._queue.popleft()]
            size = len(batch[0].items)
            deadline = time.monotonic() + self.max_wait_s
            while size < self.max_batch_size:
                if not self._queue:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or not self._cond.wait(timeout=remaining) or not self._queue:
                        break
                if size + len(self._queue[0].items) > self.max_batch_size:
                    break  # the next request starts the next batch: never split one request
                batch.append(self._queue.popleft())
                size += len(batch[-1].items)
            self._queued_items -= size
            self._running += 1
            self._report_depth()
        return [r for r in batch if r.future.set_running_or_notify_cancel()]

    def _loop(self) -> None:
        while not self._closed:
            batch = self._take()
            if batch is None:
                continue
            try:
                if batch:
                    self._run(batch)
            finally:
                with self._cond:
                    self._running -= 1
                    self._idle_since = time.monotonic()

    def _run(self, batch: list[_Request[T, R]]) -> None:
        """Run one merged call; if it fails, rerun each request alone so one bad input fails only itself."""
        items = [item for request in batch for item in request.items]
        start = time.perf_counter()
        try:
            results = list(self._fn(items))
            if len(results) != len(items):
                raise RuntimeError(f"batched function returned {len(results)} results for {len(items)} items")
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the waiting callers
            if len(batch) == 1:
                batch[0].future.set_exception(exc)
            else:
                for request in batch:
                    self._run([request])
            return
        if self._observer is not None:
            self._observer.observe_batch(len(items), len(batch), time.perf_counter() - start)
        offset = 0
        for request in batch:
            request.future.set_result(results[offset : offset + len(request.items)])
            offset += len(request.items)
