"""Per-video output files (JSON, SRT, WebVTT, plain text), written atomically so runs can resume.

A video's outputs share a *stem* (``OUTDIR/clip.mp4``) and add one suffix per format (``clip.mp4.json``,
``clip.mp4.srt``, ...). Each file is written to a hidden ``.<name>.<random>.part`` file in the same folder and
renamed into place, so a final name only ever holds a complete file; a killed run leaves at most ``.part``
files, which the next run over the same video removes. A video counts as done when all its requested
outputs exist; the missing ones are rebuilt from the JSON when that exists, without decoding again.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vision.errors import VisionError
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

FORMATS = ("json", "srt", "vtt", "txt")


def timeline_text(doc: Document) -> str:
    """Plain text of a video: each timeline entry's text once, in order of appearance."""
    return "".join(f"{entry.text}\n" for entry in doc.timeline)


def render_output(doc: Document, fmt: str) -> str:
    """The text of one output format for a video document."""
    if fmt == "json":
        return doc.to_json(indent=1)
    if fmt == "srt":
        return doc.to_srt()
    if fmt == "vtt":
        return doc.to_vtt()
    if fmt == "txt":
        return timeline_text(doc)
    raise ValueError(f"unknown video output format {fmt!r}; expected one of {FORMATS}")


def output_path(stem: Path, fmt: str) -> Path:
    """``stem`` plus ``.fmt`` (``out/clip.mp4`` -> ``out/clip.mp4.srt``)."""
    return stem.with_name(f"{stem.name}.{fmt}")


def missing_outputs(stem: Path, formats: Sequence[str]) -> list[str]:
    """The requested formats whose file does not exist yet."""
    return [fmt for fmt in formats if not output_path(stem, fmt).is_file()]


def remove_partials(stem: Path) -> None:
    """Delete ``.part`` files a killed run left for this stem."""
    if stem.parent.is_dir():
        for part in stem.parent.glob(f".{stem.name}.*.part"):
            with contextlib.suppress(FileNotFoundError):
                part.unlink()


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name.rsplit('.', 1)[0]}.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_outputs(doc: Document, stem: Path, formats: Sequence[str]) -> list[Path]:
    """Write each requested format for ``doc`` next to ``stem``; JSON last, since it marks the video done."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    ordered = [f for f in formats if f != "json"] + [f for f in formats if f == "json"]
    texts = {fmt: render_output(doc, fmt) for fmt in ordered}  # render all before touching the disk
    written = []
    for fmt in ordered:
        path = output_path(stem, fmt)
        _write_atomic(path, texts[fmt])
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
