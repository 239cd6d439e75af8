"""Per-video output files (JSON, SRT, WebVTT, plain text), written atomically so runs can resume.

A video's outputs share a *stem* (``OUTDIR/clip.mp4``) and add one extension per format from the format
table (:mod:`vision.export.formats`: ``clip.mp4.json``, ``clip.mp4.srt``, ...). Each file is written through
:func:`vision._atomic.write_atomically` (a hidden temporary sibling renamed into place, flushed to disk), so
a final name only ever holds a complete file; a killed run leaves at most temporary siblings, which the next
run over the same video removes. A video counts as done when all its requested outputs exist; the missing
ones are rebuilt from the JSON when that exists, without decoding again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vision import _atomic
from vision.errors import VisionError
from vision.export.formats import VIDEO_FORMATS, output_path, render, timeline_text
from vision.structures import Document

__all__ = [
    "FORMATS",
    "render_output",
    "timeline_text",
    "output_path",
    "missing_outputs",
    "write_outputs",
    "complete_from_json",
    "remove_partials",
]

FORMATS = VIDEO_FORMATS


def render_output(doc: Document, fmt: str) -> str:
    """The text of one output format for a video document."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown video output format {fmt!r}; expected one of {FORMATS}")
    return render(doc, fmt).decode()


def missing_outputs(stem: Path, formats: Sequence[str]) -> list[str]:
    """The requested formats whose file does not exist yet."""
    return [fmt for fmt in formats if not output_path(stem, fmt).is_file()]


def remove_partials(stem: Path) -> None:
    """Delete the temporary files a killed run left for this stem."""
    for fmt in FORMATS:
        _atomic.remove_partials(output_path(stem, fmt))


def write_outputs(doc: Document, stem: Path, formats: Sequence[str]) -> list[Path]:
    """Write each requested format for ``doc`` next to ``stem``; JSON last, since it marks the video done."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    ordered = [f for f in formats if f != "json"] + [f for f in formats if f == "json"]
    texts = {fmt: render_output(doc, fmt) for fmt in ordered}  # render all before touching the disk
    written = []
    for fmt in ordered:
        path = output_path(stem, fmt)
        _atomic.write_atomically(path, texts[fmt], durable=True)
        written.append(path)
    return written


def complete_from_json(stem: Path, formats: Sequence[str]) -> bool:
    """Write the missing formats from an existing JSON output; ``False`` when there is no usable JSON."""
    path = output_path(stem, "json")
    if not path.is_file():
        return False
    try:
        doc = Document.from_json(path.read_text(encoding="utf-8"))
    except (ValueError, KeyError, TypeError, VisionError):
        return False
    write_outputs(doc, stem, missing_outputs(stem, formats))
    return True
