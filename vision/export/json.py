"""Versioned JSON export of a :class:`~vision.structures.Document` and its lossless inverse.

The dict mirrors the dataclasses field by field (lists for tuples); masks are run-length encoded
(:mod:`vision.structures.mask`); page images are never exported. Python writes floats with ``repr``, so
``loads(dumps(doc)) == doc`` holds exactly. See docs/formats.md for the layout.
"""

from __future__ import annotations

import json
from typing import Any

from vision.export._json_read import as_list, as_opt_str, get, read_entry, read_page
from vision.export._json_table import table_to_dict, word_to_dict
from vision.structures.document import Document, Page
from vision.structures.mask import mask_to_rle

__all__ = ["SCHEMA_VERSION", "export_document", "document_from_dict", "dumps", "loads"]

SCHEMA_VERSION = 1


def export_document(doc: Document) -> dict[str, Any]:
    """A JSON-serialisable dict of ``doc`` tagged with ``schema_version`` (images are left out)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "source": doc.source,
        "pages": [_page(p) for p in doc.pages],
        "timeline": [
            {
                "text": e.text,
                "start": float(e.start),
                "end": float(e.end),
                "confidence": float(e.confidence),
                "geometry": _floats(e.geometry),
            }
            for e in doc.timeline
        ],
    }


def document_from_dict(data: dict[str, Any]) -> Document:
    """Rebuild a :class:`Document` from :func:`export_document` output.

    Raises:
        ValueError: on a missing or unsupported ``schema_version``, a missing key or a wrong type; the
            message gives the path of the bad value (e.g. ``pages[0].blocks[2].lines[0]``).
    """
    if not isinstance(data, dict):
        raise ValueError(f"document: expected an object, got {type(data).__name__}")
    version = get(data, "schema_version", "document")
    if version != SCHEMA_VERSION:
        raise ValueError(
            f"document: unsupported schema_version {version!r} (this version reads {SCHEMA_VERSION})"
        )
    pages = as_list(get(data, "pages", "document"), "pages")
    timeline = as_list(get(data, "timeline", "document"), "timeline")
    return Document(
        pages=[read_page(p, f"pages[{i}]") for i, p in enumerate(pages)],
        timeline=[read_entry(e, f"timeline[{i}]") for i, e in enumerate(timeline)],
        source=as_opt_str(get(data, "source", "document"), "source"),
    )


def dumps(doc: Document, *, indent: int | None = None) -> str:
    """``doc`` as strict JSON text (``NaN`` and infinities are refused with ``ValueError``)."""
    return json.dumps(export_document(doc), ensure_ascii=False, allow_nan=False, indent=indent)


def loads(text: str | bytes) -> Document:
    """Parse :func:`dumps` output (``ValueError`` on invalid JSON or an invalid document)."""
    return document_from_dict(json.loads(text))


def _floats(values: Any) -> list[float] | None:
    return None if values is None else [float(v) for v in values]


def _polygon(polygon: Any) -> list[list[float]] | None:
    return None if polygon is None else [[float(x), float(y)] for x, y in polygon]


def _page(page: Page) -> dict[str, Any]:
    out = {
        "page_idx": int(page.page_idx),
        "dimensions": [int(page.dimensions[0]), int(page.dimensions[1])],
        "orientation": int(page.orientation),
        "timestamp": None if page.timestamp is None else float(page.timestamp),
        "source": page.source,
        "blocks": [
            {
                "kind": block.kind,
                "geometry": _floats(block.geometry),
                "lines": [
                    {
                        "geometry": _floats(line.geometry),
                        "words": [
                            word_to_dict(w)
                            for w in line.words
                        ],
                    }
                    for line in block.lines
                ],
            }
            for block in page.blocks
        ],
        "regions": [
            {
                "kind": r.kind,
                "geometry": _floats(r.geometry),
                "score": float(r.score),
                "polygon": _polygon(r.polygon),
                "mask": None if r.mask is None else mask_to_rle(r.mask),
            }
            for r in page.regions
        ],
        "tables": [table_to_dict(t) for t in page.tables],
    }
    if page.warnings:  # only when there are some: documents without warnings export as before
        out["warnings"] = [str(w) for w in page.warnings]
    return out
