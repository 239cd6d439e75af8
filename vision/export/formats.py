"""The output formats: one table (name, file extension, media type, writer) that every interface reads.

The CLI (``vision ocr --format``, ``vision video --format``), the REST service (``format=``, job results),
the UI downloads and the video outputs all look formats up here, so a format has one name, one extension
and one media type everywhere. A writer turns a :class:`~vision.structures.Document` into the file's bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vision.structures import Document

__all__ = [
    "Format",
    "FORMATS",
    "DOCUMENT_FORMATS",
    "VIDEO_FORMATS",
    "get_format",
    "output_path",
    "render",
    "timeline_text",
]


@dataclass(frozen=True)
class Format:
    """One output format.

    Attributes:
        name: what users type (``--format alto``, ``format=alto``).
        extension: appended to the input's name for the output file (``scan.pdf`` -> ``scan.pdf.alto.xml``).
        media_type: the HTTP ``Content-Type``.
        write: the document in this format, as bytes (``dpi``: pixels per inch of the page images, which
            sets the physical page size where a format has one).
        binary: not text (cannot be printed to a terminal).
    """

    name: str
    extension: str
    media_type: str
    write: Callable[[Document, float], bytes]
    binary: bool = False


def timeline_text(doc: Document) -> str:
    """Plain text of a video: each timeline entry's text once, in order of appearance."""
    return "".join(f"{entry.text}\n" for entry in doc.timeline)


def _text(doc: Document, dpi: float) -> bytes:
    """Pages in reading order; for a video (frames with timestamps), its timeline, each line once."""
    video = bool(doc.timeline) or any(p.timestamp is not None for p in doc.pages)
    return (timeline_text(doc) if video else doc.render() + "\n").encode()


def _tsv(doc: Document, dpi: float) -> bytes:
    from vision.export.tsv import to_tsv

    return to_tsv(doc).encode()


def _pdf(doc: Document, dpi: float) -> bytes:
    from vision.export.pdf import pdf_bytes

    return pdf_bytes(doc, dpi=dpi)


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("json", ".json", "application/json", lambda d, dpi: (d.to_json(indent=1) + "\n").encode()),
        Format("txt", ".txt", "text/plain; charset=utf-8", _text),
        Format("hocr", ".hocr.html", "application/xhtml+xml", lambda d, dpi: d.export_hocr().encode()),
        Format("alto", ".alto.xml", "application/xml", lambda d, dpi: d.export_alto().encode()),
        Format("md", ".md", "text/markdown; charset=utf-8", lambda d, dpi: d.export_markdown().encode()),
        Format("html", ".html", "text/html; charset=utf-8", lambda d, dpi: d.export_html().encode()),
        Format("pdf", ".pdf", "application/pdf", _pdf, binary=True),
        Format("tsv", ".tsv", "text/tab-separated-values; charset=utf-8", _tsv),
        Format("srt", ".srt", "application/x-subrip", lambda d, dpi: d.to_srt().encode()),
        Format("vtt", ".vtt", "text/vtt; charset=utf-8", lambda d, dpi: d.to_vtt().encode()),
    )
}
DOCUMENT_FORMATS = ("json", "txt", "hocr", "alto", "md", "html", "pdf", "tsv")
"""Formats of ``vision ocr`` and ``POST /v1/ocr``."""
VIDEO_FORMATS = ("json", "srt", "vtt", "txt")
"""Formats of ``vision video``."""


def get_format(name: str) -> Format:
    """The format called ``name``.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
    """
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown output format {name!r}; expected one of {', '.join(FORMATS)}") from None


def output_path(stem: str | Path, name: str) -> Path:
    """Where the ``name`` output of input ``stem`` goes: ``out/clip.mp4`` + ``srt`` -> ``out/clip.mp4.srt``;
    a name that already ends with the extension keeps it (``out/scan.pdf`` + ``pdf`` -> ``out/scan.pdf``,
    as OCRmyPDF and Tesseract name their outputs, never ``scan.pdf.pdf``)."""
    stem, extension = Path(stem), get_format(name).extension
    return stem if stem.name.lower().endswith(extension) else stem.with_name(stem.name + extension)


def render(doc: Document, name: str, *, dpi: float = 150.0) -> bytes:
    """``doc`` in the format called ``name`` (see :class:`Format` for ``dpi``)."""
    return get_format(name).write(doc, dpi)
