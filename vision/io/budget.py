"""A decoded-pixel budget shared by everything one process decodes at the same time.

Readers know each page's size from its header (:meth:`DocumentFile.page_pixels`) before decoding it, so
a caller reserves those pixels first and releases them once it is done with the page. Memory held by
decoded pages then stays below ``capacity`` pixels whatever the number of concurrent requests, jobs and
UI sessions: a request waits (or fails after its timeout) instead of pushing the process out of memory.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from vision.errors import LimitExceeded

__all__ = ["BudgetBusy", "PixelBudget"]


class BudgetBusy(TimeoutError):
    """The budget stayed too full for the caller's timeout (the caller should retry later)."""


class PixelBudget:
    """A counting semaphore over pixels.

    Args:
        capacity: most decoded pixels held at once by all holders together.
    """

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self._used = 0
        self._cond = threading.Condition()

    @property
    def used(self) -> int:
        """Pixels currently reserved."""
        return self._used

    def acquire(self, pixels: int, timeout: float | None = None, *, source: str | None = None) -> None:
        """Reserve ``pixels``, waiting up to ``timeout`` seconds for others to release theirs.

        Raises:
            LimitExceeded: ``pixels`` is over the whole capacity (it could never be granted).
            BudgetBusy: not granted within ``timeout``.
        """
        if pixels <= 0:
            return
        if pixels > self.capacity:
            raise LimitExceeded(
                source,
                f"{pixels} decoded pixels at once are over the process budget of {self.capacity} "
                "(max_inflight_pixels)",
            )
        with self._cond:
            if not self._cond.wait_for(lambda: self._used + pixels <= self.capacity, timeout):
                raise BudgetBusy(f"{pixels} pixels not available within {timeout:g} s")
            self._used += pixels

    def release(self, pixels: int) -> None:
        """Give back ``pixels`` reserved by :meth:`acquire`."""
        with self._cond:
            self._used = max(0, self._used - pixels)
            self._cond.notify_all()

    @contextmanager
    def hold(self, pixels: int, timeout: float | None = None, *, source: str | None = None) -> Iterator[None]:
        """Reserve ``pixels`` for the ``with`` block."""
        self.acquire(pixels, timeout, source=source)
        try:
            yield
        finally:
            self.release(pixels)
