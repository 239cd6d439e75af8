"""Read ahead: produce the next items of an iterator in a background thread while the caller works.

Page decoding (PNG/JPEG, PDF rendering) runs in C code that releases the GIL, so reading batch ``k + 1``
overlaps with the models running on batch ``k``.
"""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, TypeVar

__all__ = ["prefetch"]

T = TypeVar("T")
_DONE = object()


def prefetch(items: Iterable[T], depth: int = 1) -> Iterator[T]:
    """Yield ``items`` in order, keeping up to ``depth`` of them read ahead by a daemon thread.

    An exception raised while reading is re-raised in the caller at the position it happened; closing the
    returned generator early stops the reader after its current item.
    """
    buffer: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                buffer.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as exc:  # handed to the consumer, which re-raises it
            put((_DONE, exc))
            return
        put((_DONE, None))

    thread = threading.Thread(target=work, name="vision-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = buffer.get()
            if item is _DONE:
                if exc is not None:
                    raise exc
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        thread.join(timeout=5)
