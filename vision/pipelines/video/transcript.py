"""A video's timeline in transcript order: each line shown once, as the filmed document reads.

:func:`transcript_timeline` follows the lines through motion (:mod:`vision.pipelines.video.tracking`) and
orders the entries by section (the frames between cuts, in time order):

* in a section whose view moved (a pan, zoom or scroll over a document, scrolling credits), lines go in
  **reading order on the section's canvas** (the first frame's coordinates, extended through the motion):
  rows top to bottom (a line joins a row when their vertical overlap is at least half the smaller height,
  the rule of ``vision eval``'s reading order), lines left to right in a row;
* in a still section (captions), lines go by start time, then top to bottom, then left to right, the order
  of :func:`vision.pipelines.video.timeline.merge_timeline`.

The text output writes the entries in this order; subtitle writers sort by time themselves, so a moving
line is one cue from its first to its last time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz import fuzz

from vision.ops.boxes import row_order
from vision.pipelines.video.timeline import TimelineOptions, frame_grid
from vision.pipelines.video.tracking import Track, track_lines
from vision.structures import Page, TimelineEntry

__all__ = ["reading_order", "transcript_timeline"]


def reading_order(boxes: np.ndarray) -> list[int]:
    """Indices of ``float[N, 4]`` boxes in reading order (:func:`vision.ops.boxes.row_order`)."""
    return row_order(boxes)


def _entry(
    track: Track, times: Sequence[float], next_time: Sequence[float], size: tuple[int, int]
) -> TimelineEntry:
    h, w = size
    x0, y0, x1, y1 = (float(v) for v in track.best.box)
    box = (max(0.0, x0 / w), max(0.0, y0 / h), min(1.0, x1 / w), min(1.0, y1 / h))
    start = times[track.first] if track.start is None else track.start
    end = next_time[track.last] if track.end is None else track.end
    return TimelineEntry(track.text, start, max(start, end), track.best.confidence, box)


def _drop_pieces(tracks: list[Track]) -> list[Track]:
    """Tracks of a moving section without those that are a piece of another: their canvas box lies mostly
    (>= 60%) inside the other's and their text is contained in its text (``partial_ratio`` >= 90). The OCR
    groups words into lines a little differently from frame to frame ("Substance 36" on one, "36" on the
    next); the longer line keeps the shorter one's times."""
    kept: list[Track] = []
    for t in sorted(tracks, key=lambda t: -len(t.text)):
        host = next(
            (
                k
                for k in kept
                if _inside_share(t.canvas, k.canvas) >= 0.6
                and fuzz.partial_ratio(t.text.casefold(), k.text.casefold()) >= 90
            ),
            None,
        )
        if host is None:
            kept.append(t)
            continue
        host.first, host.last = min(host.first, t.first), max(host.last, t.last)
    return kept


def _inside_share(box: np.ndarray, other: np.ndarray) -> float:
    """The share of ``box``'s area inside ``other``."""
    iw = max(0.0, min(box[2], other[2]) - max(box[0], other[0]))
    ih = max(0.0, min(box[3], other[3]) - max(box[1], other[1]))
    area = (box[2] - box[0]) * (box[3] - box[1])
    return iw * ih / area if area > 0 else 0.0


def transcript_timeline(
    pages: Sequence[Page],
    *,
    end: float | None = None,
    samples: int | None = None,
    interval: float | None = None,
    config: TimelineOptions = TimelineOptions(),
) -> list[TimelineEntry]:
    """Timeline entries of sampled frames, one per line shown, in transcript order (module docstring).

    Arguments as :func:`vision.pipelines.video.timeline.merge_timeline`.
    """
    frames, times, idx, next_time, next_idx = frame_grid(pages, end=end, samples=samples, interval=interval)
    if not frames:
        return []
    tracks, sections = track_lines(frames, idx, next_idx, times, config)
    size = frames[0].dimensions
    entries: list[TimelineEntry] = []
    for number, section in enumerate(sections):
        members = [t for t in tracks if t.section == number]
        if section.moved:
            members = _drop_pieces(members)
            boxes = np.array([t.canvas for t in members]).reshape(-1, 4)
            ordered = [members[i] for i in reading_order(boxes)]
        else:
            ordered = sorted(members, key=lambda t: (times[t.first], t.best.box[1], t.best.box[0]))
        entries.extend(_entry(t, times, next_time, size) for t in ordered)
    return entries
