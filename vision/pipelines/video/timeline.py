"""Temporal merge: per-frame OCR lines -> one :class:`TimelineEntry` per text shown on screen.

Frames are *samples*: ``page_idx`` is a frame's position in the sampling sequence (as
:meth:`vision.io.DocumentFile.from_video` numbers them) and ``timestamp`` its presentation time. Frames may
be missing from the sequence (scene-change sampling keeps only frames that differ from the last kept one):
a frame stands for every sample up to the next frame given, and for the time from its timestamp to the next
frame's (the last one up to ``end``).

A line of text is an *observation*; observations in successive frames belong to the same *track* when their
texts match fuzzily (rapidfuzz ``ratio`` on case-folded alphanumerics, at least ``min_similarity``) **and**
their boxes overlap (IoU at least ``min_iou``). Matching is greedy, best pairs first (similarity + IoU),
one observation per track and frame.

Rules, stated once:

* **Times.** A track seen from frame ``i`` to frame ``j`` gives ``start = t[i]`` and ``end = t[j+1]`` (the
  next frame's timestamp): the true appearance lies after the previous sample and the disappearance before
  the next one, so both are within one sampling interval of the truth.
* **Gaps.** A track survives up to ``max_gap`` samples in which OCR missed it (a detector blink must not
  split a caption in two); a longer absence ends it.
* **Flicker.** A track that stands for fewer than ``min_frames`` samples is dropped: text seen in one
  sample only is treated as noise (misreads, cross-fades, one-frame flashes). Text must stay on screen for
  ``min_frames`` sampling intervals to be sure of a place on the timeline; pick ``fps`` accordingly.
* **Reading.** An entry carries the reading with the best confidence (mean of its word confidences) and
  that reading's box.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from vision.structures import BBox, Document, Page, TimelineEntry

__all__ = ["TimelineOptions", "Observation", "line_observations", "merge_timeline", "video_document"]


@dataclass(frozen=True)
class TimelineOptions:
    """Knobs of the temporal merge (see the module docstring for the rules they drive).

    Attributes:
        min_similarity: rapidfuzz ``ratio`` (0-100) above which two readings are the same text. 80 lets one
            wrong letter in a 5-letter word (ratio 80) or two in a 10-letter one still match.
        min_iou: box overlap above which two observations are at the same place; 0.3 tolerates the jitter
            of detection boxes on a static caption while keeping two captions on different lines apart.
        max_gap: samples a track may go unseen and still continue.
        min_frames: samples a track must stand for to be kept (1 keeps everything).
    """

    min_similarity: float = 80.0
    min_iou: float = 0.3
    max_gap: int = 1
    min_frames: int = 2

    def __post_init__(self) -> None:
        if not 0 <= self.min_similarity <= 100 or not 0 <= self.min_iou <= 1:
            raise ValueError("min_similarity must lie in [0, 100] and min_iou in [0, 1]")
        if self.max_gap < 0 or self.min_frames < 1:
            raise ValueError("max_gap must be >= 0 and min_frames >= 1")


@dataclass(frozen=True)
class Observation:
    """One line of text read on one frame."""

    text: str
    confidence: float
    box: BBox


@dataclass
class _Track:
    first: int  # frame position of the first observation
    last: int  # frame position of the latest observation
    latest: Observation
    best: Observation

    def add(self, position: int, obs: Observation) -> None:
        self.last, self.latest = position, obs
        if obs.confidence > self.best.confidence:
            self.best = obs


def line_observations(page: Page) -> list[Observation]:
    """Non-blank lines of ``page`` as observations (whitespace collapsed, confidence = mean of words).

    Two observations of one frame with matching text and overlapping boxes (an OCR duplicate) are reduced
    to the more confident one.
    """
    found: list[Observation] = []
    for block in page.blocks:
        for line in block.lines:
            text = " ".join(line.render().split())
            if not text or not line.words or line.geometry is None:
                continue
            conf = sum(w.confidence for w in line.words) / len(line.words)
            found.append(Observation(text, float(conf), tuple(float(v) for v in line.geometry)))
    found.sort(key=lambda o: -o.confidence)
    kept: list[Observation] = []
    for obs in found:
        if not any(_similarity(obs.text, k.text) >= 80.0 and box_iou(obs.box, k.box) >= 0.5 for k in kept):
            kept.append(obs)
    return kept


def box_iou(a: BBox, b: BBox) -> float:
    """Intersection over union of two ``(x0, y0, x1, y1)`` boxes (0 when both are empty)."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _similarity(a: str, b: str) -> float:
    """Fuzzy ratio on case-folded alphanumerics; texts without any compare exactly."""
    pa, pb = default_process(a), default_process(b)
    if not pa and not pb:
        return 100.0 if a == b else 0.0
    return float(fuzz.ratio(pa, pb))


def merge_timeline(
    pages: Sequence[Page],
    *,
    end: float | None = None,
    samples: int | None = None,
    interval: float | None = None,
    config: TimelineOptions = TimelineOptions(),
) -> list[TimelineEntry]:
    """Merge the lines of sampled frames into timeline entries.

    Args:
        pages: OCR results of sampled frames, each with a ``timestamp``; ``page_idx`` is the sample position
            (strictly increasing with time). Sorted here by time.
        end: time at which the last frame stops being shown (default: last time + ``interval``).
        samples: number of samples in the sequence (default: last ``page_idx`` + 1).
        interval: sampling interval in seconds, used only for the default ``end`` (default: median step).
        config: matching, gap and flicker rules.

    Returns:
        Entries sorted by start time, then top to bottom, then left to right.
    """
    if any(p.timestamp is None for p in pages):
        raise ValueError("every page needs a timestamp to build a timeline")
    frames = sorted(pages, key=lambda p: (p.timestamp, p.page_idx))
    if not frames:
        return []
    times = [float(p.timestamp) for p in frames]  # type: ignore[arg-type]
    idx = [p.page_idx for p in frames]
    if any(b <= a for a, b in zip(idx, idx[1:])):
        raise ValueError("page_idx must be the sample position: strictly increasing with the timestamp")
    total = samples if samples is not None else idx[-1] + 1
    if total <= idx[-1]:
        raise ValueError(f"samples={samples} but a frame has sample position {idx[-1]}")
    stop = max(end if end is not None else times[-1] + _step(times, interval), times[-1])
    next_time = times[1:] + [stop]  # frame k stands for [times[k], next_time[k]) ...
    next_idx = idx[1:] + [total]  # ... and for the samples [idx[k], next_idx[k])

    active: list[_Track] = []
    done: list[_Track] = []
    for pos, page in enumerate(frames):
        expired = [t for t in active if idx[pos] - next_idx[t.last] > config.max_gap]
        done.extend(expired)
        active = [t for t in active if t not in expired]
        for track, obs in _match(active, line_observations(page), config):
            if track is None:
                track = _Track(first=pos, last=pos, latest=obs, best=obs)
                active.append(track)
            track.add(pos, obs)
    done.extend(active)

    entries = []
    for track in done:
        if next_idx[track.last] - idx[track.first] < config.min_frames:
            continue
        best = track.best
        entries.append(
            TimelineEntry(best.text, times[track.first], next_time[track.last], best.confidence, best.box)
        )
    entries.sort(key=lambda e: (e.start, e.geometry[1], e.geometry[0]))
    return entries


def _step(times: list[float], interval: float | None) -> float:
    if interval is not None:
        if not interval > 0:
            raise ValueError(f"interval must be positive, got {interval}")
        return interval
    steps = [b - a for a, b in zip(times, times[1:]) if b > a]
    if not steps:
        raise ValueError("give end= or interval= when fewer than two distinct frame times are known")
    return statistics.median(steps)


def _match(
    tracks: list[_Track], observations: list[Observation], config: TimelineOptions
) -> list[tuple[_Track | None, Observation]]:
    """Greedy one-to-one assignment of a frame's observations to tracks (``None``: a new track)."""
    pairs = []
    for ti, track in enumerate(tracks):
        for oi, obs in enumerate(observations):
            sim = max(_similarity(track.latest.text, obs.text), _similarity(track.best.text, obs.text))
            iou = box_iou(track.latest.box, obs.box)
            if sim >= config.min_similarity and iou >= config.min_iou:
                pairs.append((sim / 100.0 + iou, ti, oi))
    pairs.sort(reverse=True)
    used_t: set[int] = set()
    owner: dict[int, _Track] = {}
    for _, ti, oi in pairs:
        if ti not in used_t and oi not in owner:
            used_t.add(ti)
            owner[oi] = tracks[ti]
    return [(owner.get(oi), obs) for oi, obs in enumerate(observations)]


def video_document(
    pages: Sequence[Page],
    *,
    source: str | None,
    end: float | None = None,
    samples: int | None = None,
    interval: float | None = None,
    config: TimelineOptions = TimelineOptions(),
) -> Document:
    """A video's :class:`Document`: its frames in time order plus the merged timeline."""
    ordered = sorted(pages, key=lambda p: (p.timestamp if p.timestamp is not None else -1.0, p.page_idx))
    timeline = merge_timeline(ordered, end=end, samples=samples, interval=interval, config=config)
    return Document(pages=list(ordered), timeline=timeline, source=source)
