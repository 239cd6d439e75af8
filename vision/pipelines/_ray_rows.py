"""Reassemble documents from the rows of a Ray Data pipeline, each as soon as all of it has arrived.

Both Ray engines (:mod:`vision.pipelines.ocr.ray_engine`, :mod:`vision.pipelines.video.ray_engine`) emit, per
input, part rows (a page, a frame) and the number of parts, or one ``error`` row, in any order. The number
comes in an end row, or in the part rows themselves (the OCR engine: every page row holds its document's
page count, so an actor's batch of N rows is N pages): :func:`complete_groups` hands each input back once,
never partially.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["complete_groups"]


def complete_groups(
    rows: Iterable[Any], *, key: Callable[[Any], Any], part: str, count: str
) -> Iterator[tuple[Any, list[Any] | None, Any]]:
    """Group ``rows`` by ``key(row)``; yield ``(key, parts, end_row)`` once every part row (``kind == part``)
    announced by the ``count`` field is in (parts in arrival order), or ``(key, None, error_row)`` at the
    group's first ``error`` row. The count is an end row's (any other kind), or a part row's when it is
    positive (``end_row`` is then the part row that announced it). Rows of a group already yielded are
    dropped."""
    parts: dict[Any, list[Any]] = {}
    ends: dict[Any, Any] = {}
    closed: set[Any] = set()
    for row in rows:
        k = key(row)
        if k in closed:
            continue
        kind = str(row["kind"])
        if kind == "error":
            closed.add(k)
            parts.pop(k, None)
            yield k, None, row
            continue
        if kind == part:
            parts.setdefault(k, []).append(row)
        if kind != part or int(row.get(count) or 0) > 0:
            ends[k] = row
        end = ends.get(k)
        if end is not None and len(parts.get(k, [])) == int(end[count]):
            closed.add(k)
            ends.pop(k)
            yield k, parts.pop(k, []), end
