"""SubRip (``.srt``) and WebVTT (``.vtt``) subtitles from a video document's ``timeline``.

Cues are sorted by start then end time (overlapping cues are allowed by both formats); times are
rounded to milliseconds and every cue lasts at least 1 ms. Entries whose text is blank are skipped,
and blank lines inside a text are dropped because a blank line ends a cue in both formats.
"""

from __future__ import annotations

import html
import math

from vision.structures.document import Document, TimelineEntry

__all__ = ["to_srt", "to_vtt", "format_timestamp"]


def format_timestamp(seconds: float, *, separator: str = ",") -> str:
    """``HH:MM:SS<separator>mmm`` for a time in seconds (hours grow past 99 if needed).

    Raises:
        ValueError: for a negative or non-finite time.
    """
    return _format_ms(_to_ms(seconds), separator)


def to_srt(doc: Document) -> str:
    """SubRip text: numbered cues ``1, 2, ...`` with ``HH:MM:SS,mmm --> HH:MM:SS,mmm`` timings."""
    blocks = [
        f"{index}\n{_format_ms(start, ',')} --> {_format_ms(end, ',')}\n{text}\n"
        for index, (start, end, text) in enumerate(_cues(doc), start=1)
    ]
    return "\n".join(blocks)


def to_vtt(doc: Document) -> str:
    """WebVTT text: a ``WEBVTT`` header then cues timed ``HH:MM:SS.mmm --> HH:MM:SS.mmm``.

    Cue text is HTML-escaped (``&``, ``<``, ``>``), which also keeps ``-->`` out of cue payloads.
    """
    cues = [
        f"{_format_ms(start, '.')} --> {_format_ms(end, '.')}\n{html.escape(text, quote=False)}\n"
        for start, end, text in _cues(doc)
    ]
    return "\n".join(["WEBVTT\n", *cues])


def _cues(doc: Document) -> list[tuple[int, int, str]]:
    """``(start_ms, end_ms, text)`` per non-blank entry, sorted by time."""
    cues = []
    for entry in doc.timeline:
        text = "\n".join(line.strip() for line in entry.text.splitlines() if line.strip())
        if not text:
            continue
        start, end = _span_ms(entry)
        cues.append((start, end, text))
    return sorted(cues, key=lambda cue: (cue[0], cue[1]))


def _span_ms(entry: TimelineEntry) -> tuple[int, int]:
    if entry.end < entry.start:
        raise ValueError(f"timeline entry {entry.text!r} ends ({entry.end}) before it starts ({entry.start})")
    start = _to_ms(entry.start)
    return start, max(_to_ms(entry.end), start + 1)


def _to_ms(seconds: float) -> int:
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"subtitle times must be finite and non-negative, got {seconds!r}")
    return round(seconds * 1000)


def _format_ms(ms: int, separator: str) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{millis:03d}"
