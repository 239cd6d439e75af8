"""Readers for :func:`vision.export.json.document_from_dict`: each checks a decoded JSON value's keys and
types and raises ``ValueError`` naming the value's path (``pages[0].blocks[2].lines[0]``)."""

from __future__ import annotations

import math
from typing import Any

from vision.structures.document import Block, Line, Page, Region, TimelineEntry, Word
from vision.structures.geometry import BBox, Polygon
from vision.structures.mask import mask_from_rle


def get(d: Any, key: str, path: str) -> Any:
    """``d[key]``, after checking that ``d`` is an object that has ``key``."""
    if not isinstance(d, dict):
        raise ValueError(f"{path}: expected an object, got {type(d).__name__}")
    if key not in d:
        raise ValueError(f"{path}: missing key {key!r}")
    return d[key]


def as_list(v: Any, path: str) -> list[Any]:
    if not isinstance(v, list):
        raise ValueError(f"{path}: expected a list, got {type(v).__name__}")
    return v


def as_str(v: Any, path: str) -> str:
    if not isinstance(v, str):
        raise ValueError(f"{path}: expected a string, got {type(v).__name__}")
    return v


def as_opt_str(v: Any, path: str) -> str | None:
    return None if v is None else as_str(v, path)


def as_int(v: Any, path: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{path}: expected an integer, got {v!r}")
    return v


def as_float(v: Any, path: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{path}: expected a number, got {v!r}")
    if not math.isfinite(v):  # Python's json reads NaN and Infinity; the writer never emits them
        raise ValueError(f"{path}: expected a finite number, got {v!r}")
    return float(v)


def as_opt_float(v: Any, path: str) -> float | None:
    return None if v is None else as_float(v, path)


def as_box(v: Any, path: str) -> BBox:
    """A ``[x0, y0, x1, y1]`` list as a tuple of floats."""
    if not isinstance(v, list) or len(v) != 4:
        raise ValueError(f"{path}: expected [x0, y0, x1, y1], got {v!r}")
    x0, y0, x1, y1 = (as_float(c, path) for c in v)
    return (x0, y0, x1, y1)


def as_opt_box(v: Any, path: str) -> BBox | None:
    return None if v is None else as_box(v, path)


def as_polygon(v: Any, path: str) -> Polygon | None:
    """Four ``[x, y]`` points as a tuple of tuples, or ``None``."""
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != 4 or not all(isinstance(p, list) and len(p) == 2 for p in v):
        raise ValueError(f"{path}: expected four [x, y] points, got {v!r}")
    p0, p1, p2, p3 = ((as_float(p[0], path), as_float(p[1], path)) for p in v)
    return (p0, p1, p2, p3)


def as_outline(v: Any, path: str) -> tuple[tuple[float, float], ...] | None:
    """Three or more ``[x, y]`` points as a tuple of tuples, or ``None``."""
    if v is None:
        return None
    if not isinstance(v, list) or len(v) < 3 or not all(isinstance(p, list) and len(p) == 2 for p in v):
        raise ValueError(f"{path}: expected three or more [x, y] points, got {v!r}")
    return tuple((as_float(p[0], path), as_float(p[1], path)) for p in v)


def read_page(d: Any, path: str) -> Page:
    from vision.export._json_table import read_tables  # it builds on the readers of this module

    dims = as_list(get(d, "dimensions", path), f"{path}.dimensions")
    if len(dims) != 2:
        raise ValueError(f"{path}.dimensions: expected [height, width], got {dims!r}")
    blocks = as_list(get(d, "blocks", path), f"{path}.blocks")
    regions = as_list(get(d, "regions", path), f"{path}.regions")
    return Page(
        page_idx=as_int(get(d, "page_idx", path), f"{path}.page_idx"),
        dimensions=(as_int(dims[0], f"{path}.dimensions[0]"), as_int(dims[1], f"{path}.dimensions[1]")),
        blocks=[_read_block(b, f"{path}.blocks[{i}]") for i, b in enumerate(blocks)],
        regions=[_read_region(r, f"{path}.regions[{i}]") for i, r in enumerate(regions)],
        orientation=as_int(get(d, "orientation", path), f"{path}.orientation"),
        timestamp=as_opt_float(get(d, "timestamp", path), f"{path}.timestamp"),
        source=as_opt_str(get(d, "source", path), f"{path}.source"),
        tables=read_tables(d, path, _read_word),
        warnings=[str(w) for w in as_list(d.get("warnings", []), f"{path}.warnings")],
    )


def _read_block(d: Any, path: str) -> Block:
    from vision.export._json_table import read_kind

    lines = as_list(get(d, "lines", path), f"{path}.lines")
    return Block(
        lines=[_read_line(ln, f"{path}.lines[{i}]") for i, ln in enumerate(lines)],
        geometry=as_opt_box(get(d, "geometry", path), f"{path}.geometry"),
        kind=read_kind(d, path),
    )


def _read_line(d: Any, path: str) -> Line:
    words = as_list(get(d, "words", path), f"{path}.words")
    return Line(
        words=[_read_word(w, f"{path}.words[{i}]") for i, w in enumerate(words)],
        geometry=as_opt_box(get(d, "geometry", path), f"{path}.geometry"),
    )


def _read_word(d: Any, path: str) -> Word:
    return Word(
        value=as_str(get(d, "value", path), f"{path}.value"),
        confidence=as_float(get(d, "confidence", path), f"{path}.confidence"),
        geometry=as_box(get(d, "geometry", path), f"{path}.geometry"),
        polygon=as_polygon(get(d, "polygon", path), f"{path}.polygon"),
        outline=as_outline(d.get("outline"), f"{path}.outline"),
    )


def _read_region(d: Any, path: str) -> Region:
    mask = get(d, "mask", path)
    if mask is not None:
        try:
            mask = mask_from_rle(mask)
        except ValueError as exc:
            raise ValueError(f"{path}.mask: {exc}") from None
    return Region(
        kind=as_str(get(d, "kind", path), f"{path}.kind"),
        geometry=as_box(get(d, "geometry", path), f"{path}.geometry"),
        score=as_float(get(d, "score", path), f"{path}.score"),
        polygon=as_polygon(get(d, "polygon", path), f"{path}.polygon"),
        mask=mask,
    )


def read_entry(d: Any, path: str) -> TimelineEntry:
    return TimelineEntry(
        text=as_str(get(d, "text", path), f"{path}.text"),
        start=as_float(get(d, "start", path), f"{path}.start"),
        end=as_float(get(d, "end", path), f"{path}.end"),
        confidence=as_float(get(d, "confidence", path), f"{path}.confidence"),
        geometry=as_box(get(d, "geometry", path), f"{path}.geometry"),
    )
