"""JSON of the structure added to pages: block kinds and tables (written by :mod:`vision.export.json`).

Both keys are optional when reading (``"kind"`` defaults to ``"paragraph"``, ``"tables"`` to none), so
documents written before they existed still load.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vision.export._json_read import as_box, as_int, as_list, as_opt_box, as_str, get
from vision.structures.table import BLOCK_KINDS, Table, TableCell

__all__ = ["read_kind", "read_tables", "table_to_dict", "word_to_dict"]


def _floats(values: Any) -> list[float] | None:
    return None if values is None else [float(v) for v in values]


def _points(points: Any) -> list[list[float]] | None:
    return None if points is None else [[float(x), float(y)] for x, y in points]


def word_to_dict(w: Any) -> dict[str, Any]:
    """A word's dict (the JSON format's, in pages and table cells alike); ``outline`` only when the word has
    one (``OCROptions.outlines``)."""
    out = {"value": w.value, "confidence": float(w.confidence), "geometry": _floats(w.geometry),
           "polygon": _points(w.polygon)}
    if w.outline is not None:
        out["outline"] = _points(w.outline)
    return out


def table_to_dict(table: Table) -> dict[str, Any]:
    """A JSON-serialisable dict of ``table`` (cells with their words)."""
    return {
        "geometry": _floats(table.geometry),
        "n_rows": int(table.n_rows),
        "n_cols": int(table.n_cols),
        "header_rows": int(table.header_rows),
        "cells": [
            {
                "row": int(c.row),
                "col": int(c.col),
                "row_span": int(c.row_span),
                "col_span": int(c.col_span),
                "header": bool(c.header),
                "geometry": _floats(c.geometry),
                "words": [word_to_dict(w) for w in c.words],
            }
            for c in table.cells
        ],
    }


def read_kind(d: dict[str, Any], path: str) -> str:
    """A block's ``kind`` (default ``"paragraph"``), checked against :data:`BLOCK_KINDS`."""
    kind = as_str(d.get("kind", "paragraph"), f"{path}.kind")
    if kind not in BLOCK_KINDS:
        raise ValueError(f"{path}.kind: unknown block kind {kind!r} (one of {', '.join(BLOCK_KINDS)})")
    return kind


def _as_bool(v: Any, path: str) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"{path}: expected true or false, got {v!r}")
    return v


def _read_cell(d: Any, path: str, read_word: Callable[[Any, str], Any]) -> TableCell:
    words = as_list(get(d, "words", path), f"{path}.words")
    return TableCell(
        row=as_int(get(d, "row", path), f"{path}.row"),
        col=as_int(get(d, "col", path), f"{path}.col"),
        words=[read_word(w, f"{path}.words[{i}]") for i, w in enumerate(words)],
        row_span=as_int(get(d, "row_span", path), f"{path}.row_span"),
        col_span=as_int(get(d, "col_span", path), f"{path}.col_span"),
        header=_as_bool(get(d, "header", path), f"{path}.header"),
        geometry=as_opt_box(get(d, "geometry", path), f"{path}.geometry"),
    )


def read_tables(page: dict[str, Any], path: str, read_word: Callable[[Any, str], Any]) -> list[Table]:
    """The ``tables`` of a page dict (none when the key is absent); each table's grid is checked."""
    tables = []
    for i, d in enumerate(as_list(page.get("tables", []), f"{path}.tables")):
        p = f"{path}.tables[{i}]"
        cells = as_list(get(d, "cells", p), f"{p}.cells")
        table = Table(
            geometry=as_box(get(d, "geometry", p), f"{p}.geometry"),
            n_rows=as_int(get(d, "n_rows", p), f"{p}.n_rows"),
            n_cols=as_int(get(d, "n_cols", p), f"{p}.n_cols"),
            cells=[_read_cell(c, f"{p}.cells[{j}]", read_word) for j, c in enumerate(cells)],
            header_rows=as_int(get(d, "header_rows", p), f"{p}.header_rows"),
        )
        try:
            table.check()
        except ValueError as exc:
            raise ValueError(f"{p}: {exc}") from None
        tables.append(table)
    return tables
