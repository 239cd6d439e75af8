"""Typed results: ``Document > Page > Block > Line > Word``, plus ``Region`` and video ``TimelineEntry``.

Geometry follows :mod:`vision.structures.geometry` (relative ``(x0, y0, x1, y1)`` boxes, optional
4-point polygons). Exporters live in :mod:`vision.export`; the methods here only delegate to them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vision.structures.geometry import BBox, Polygon, union_box
from vision.structures.table import Table

__all__ = ["Word", "Line", "Block", "Region", "Page", "TimelineEntry", "Document"]


@dataclass
class Word:
    """A recognised word: its text, confidence in [0, 1], box, optional rotated polygon and optional outline
    (``OCROptions.outlines``: the word's region as a polygon of 4 to 32 points, clockwise, relative to the
    page, which follows a curved baseline)."""

    value: str
    confidence: float
    geometry: BBox
    polygon: Polygon | None = None
    outline: tuple[tuple[float, float], ...] | None = None


@dataclass
class Line:
    """Words on one baseline, left to right; ``geometry`` defaults to the union of the words."""

    words: list[Word]
    geometry: BBox | None = None

    def __post_init__(self) -> None:
        if self.geometry is None and self.words:
            self.geometry = union_box(w.geometry for w in self.words)

    def render(self) -> str:
        """The words joined by single spaces."""
        return " ".join(w.value for w in self.words)


@dataclass
class Block:
    """A paragraph, heading, list item, ... (``kind``, one of ``BLOCK_KINDS``): lines top to bottom."""

    lines: list[Line]
    geometry: BBox | None = None
    kind: str = "paragraph"

    def __post_init__(self) -> None:
        boxes = [ln.geometry for ln in self.lines if ln.geometry is not None]
        if self.geometry is None and boxes:  # lines without words have no box and add nothing
            self.geometry = union_box(boxes)

    def render(self) -> str:
        """The lines joined by newlines."""
        return "\n".join(ln.render() for ln in self.lines)


@dataclass
class Region:
    """A non-text area or a segmentation mask (``kind`` says which: "figure", "table", "mask", ...).

    ``mask`` is an optional boolean ``H x W`` array over the whole page. Equality compares masks by
    shape and content (the generated ``__eq__`` would fail on arrays).
    """

    kind: str
    geometry: BBox
    score: float = 1.0
    polygon: Polygon | None = None
    mask: np.ndarray | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Region):
            return NotImplemented
        same_fields = (self.kind, self.geometry, self.score, self.polygon) == (
            other.kind,
            other.geometry,
            other.score,
            other.polygon,
        )
        if self.mask is None or other.mask is None:
            return same_fields and self.mask is other.mask
        return same_fields and bool(np.array_equal(self.mask, other.mask))


@dataclass
class Page:
    """One page or video frame.

    Attributes:
        page_idx: index in the source document (frame index for videos).
        dimensions: ``(height, width)`` in pixels of the image the geometry refers to.
        blocks: text blocks in reading order.
        regions: non-text regions and masks.
        orientation: clockwise rotation in degrees (0, 90, 180, 270) applied to read the page.
        timestamp: presentation time in seconds for video frames, else ``None``.
        source: file name or other origin.
        image: the RGB ``H x W x 3`` uint8 page (kept for searchable PDFs and drawing; never exported).
        tables: table structures; the i-th block of kind ``"table"`` holds the words of ``tables[i]``.
        warnings: notes on how far to trust the page's text (e.g. text in a script no shipped recognizer
            reads: see :mod:`vision.predictors.recognition.script`).
    """

    page_idx: int
    dimensions: tuple[int, int]
    blocks: list[Block] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    orientation: int = 0
    timestamp: float | None = None
    source: str | None = None
    image: np.ndarray | None = field(default=None, repr=False, compare=False)
    tables: list[Table] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def words(self) -> list[Word]:
        """All words of the page in reading order (blocks, then lines, then words)."""
        return [w for b in self.blocks for ln in b.lines for w in ln.words]

    def render(self) -> str:
        """Plain text of the page: lines joined by newlines, blocks by blank lines."""
        from vision.export.text import render_page

        return render_page(self)


@dataclass
class TimelineEntry:
    """Text seen in a video from ``start`` to ``end`` seconds, with its best reading and box."""

    text: str
    start: float
    end: float
    confidence: float
    geometry: BBox


@dataclass
class Document:
    """The result of a predictor: pages in order, plus a text timeline for videos."""

    pages: list[Page] = field(default_factory=list)
    timeline: list[TimelineEntry] = field(default_factory=list)
    source: str | None = None

    def words(self) -> Iterator[Word]:
        """Every word of every page, in order."""
        for page in self.pages:
            yield from page.words

    def render(self) -> str:
        """Plain text in reading order; pages separated by a form feed line."""
        from vision.export.text import render_document

        return render_document(self)

    def export(self) -> dict[str, Any]:
        """A versioned, JSON-serialisable dict (see :mod:`vision.export.json`)."""
        from vision.export.json import export_document

        return export_document(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        """Rebuild a document from :meth:`export` output (lossless)."""
        from vision.export.json import document_from_dict

        return document_from_dict(data)

    def to_json(self, *, indent: int | None = None) -> str:
        """:meth:`export` as strict JSON text (floats written exactly, NaN refused)."""
        from vision.export.json import dumps

        return dumps(self, indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> Document:
        """Rebuild a document from :meth:`to_json` text."""
        from vision.export.json import loads

        return loads(text)

    def export_markdown(self) -> str:
        """Markdown: headings, paragraphs, lists, tables; page headers and footers dropped
        (see :mod:`vision.export.markdown`)."""
        from vision.export.markdown import export_markdown

        return export_markdown(self)

    def export_html(self) -> str:
        """An HTML5 document with the same content as :meth:`export_markdown` (see :mod:`vision.export.html`)."""
        from vision.export.html import export_html

        return export_html(self)

    def export_hocr(self) -> str:
        """hOCR (XHTML) with pixel boxes and word confidences (see :mod:`vision.export.hocr`)."""
        from vision.export.hocr import export_hocr

        return export_hocr(self)

    def export_alto(self) -> str:
        """ALTO v4 XML in pixel units (see :mod:`vision.export.alto`)."""
        from vision.export.alto import export_alto

        return export_alto(self)

    def save_pdf(self, path: str | Path, *, dpi: float = 150.0, font_path: str | Path | None = None) -> None:
        """Write a searchable PDF: page images with an invisible text layer on the words.

        ``dpi`` maps page pixels to PDF points; ``font_path`` picks the TrueType font of the text layer
        (default: DejaVu Sans). See :func:`vision.export.pdf.save_pdf`.
        """
        from vision.export.pdf import save_pdf

        save_pdf(self, path, dpi=dpi, font_path=font_path)

    def to_srt(self) -> str:
        """SubRip subtitles from :attr:`timeline`."""
        from vision.export.subtitles import to_srt

        return to_srt(self)

    def to_vtt(self) -> str:
        """WebVTT subtitles from :attr:`timeline`."""
        from vision.export.subtitles import to_vtt

        return to_vtt(self)
