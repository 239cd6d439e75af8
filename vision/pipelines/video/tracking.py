"""Tracks of text lines through camera and text motion: per-frame OCR lines -> one track per line shown.

The rules of :mod:`vision.pipelines.video.timeline` (fuzzy text + box overlap, gaps, flicker, best reading,
times), generalized to moving pictures:

* **Motion.** Between two frames with text, :func:`~vision.pipelines.video.motion.estimate_motion` gives
  where the previous frame's words went (up to two layers: the picture, and text moving over it). Every
  active track's box is carried along with its layer's motion before matching, so a line keeps its identity
  while it pans, zooms or scrolls; its box overlaps the new reading as a still caption's does. Frames without
  text carry nothing (a brief occlusion keeps the tracks where they were); two frames with text and no word
  in common are a **cut**: positions carry over unchanged, and the transcript starts a new section.
* **Matching.** A reading continues a track when the texts match (``ratio`` >= ``min_similarity``) and the
  boxes overlap (IoU >= ``min_iou``), or when one box lies mostly inside the other (>= 60% of the smaller)
  and one text is contained in the other (``partial_ratio`` >= 90): a line cut by the frame edge continues
  as it comes into view. Greedy, best pairs first, one reading per track and frame.
* **Gaps** count only samples in which the track's predicted box lies inside the frame: a line that leaves
  the picture is not missing, and matches again when the camera comes back.
* **Flicker.** A track standing for fewer than ``min_frames`` samples (``moving_min_frames`` in a section
  whose view moved, when set) is dropped, unless it moved out of the frame after fewer samples in view than that
  (it could not be seen longer) and its reading is not cut by the frame edge. Still text is always
  in view, so for still captions these are the rules of
  :func:`~vision.pipelines.video.timeline.merge_timeline`.
* **Reading.** The best reading is the most confident one not cut by the frame edge (cut ones only when
  there is no other).

Each track also gets a position on its section's **canvas** (the coordinates of the section's first frame,
reached through the accumulated motion), which :mod:`vision.pipelines.video.transcript` uses to put the
lines of a filmed document in reading order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz import fuzz

from vision.pipelines.video.motion import (
    IDENTITY,
    FrameWords,
    Motion,
    apply,
    compose,
    estimate_motion,
    invert,
)
from vision.pipelines.video.stitch import extend, join, trim_cut
from vision.pipelines.video.timeline import TimelineOptions, _similarity
from vision.structures import Page

__all__ = ["LineReading", "Section", "Track", "track_lines"]

EDGE = 0.005  # a box within 0.5% of the frame edge is cut by it
VIEW_TOLERANCE = 0.02  # a predicted box within 2% outside the frame still counts as in view (motion error)
SLIVER = 3  # a reading cut by the frame edge with fewer letters and digits than this is left out
MOVED = 0.05  # a section whose view moved by 5% of the frame is a moving one (see video_transcript)


@dataclass(frozen=True)
class LineReading:
    """One line read on one frame: text, mean word confidence, pixel box, its words' indices, edge cut."""

    text: str
    confidence: float
    box: np.ndarray
    words: tuple[int, ...]
    clipped: bool
    sides: tuple[bool, bool] = (False, False)  # cut by the left, the right edge: a window on a longer line


@dataclass
class Track:
    """A line followed through the sampled frames (positions index the time-sorted frames)."""

    first: int
    last: int
    box: np.ndarray  # where the line is (predicted) on the current frame, pixels
    best: LineReading
    latest: str
    canvas: np.ndarray  # box on its section's canvas, pixels
    section: int
    layer: int = 0
    missed: int = 0  # samples in view since it was last read
    in_view: int = 0  # samples in view, read or not
    left: bool = False  # moved out of the frame since it was last read
    start: float | None = None  # interpolated times of moving text (None: the sample times)
    end: float | None = None
    joined: str | None = None  # the line assembled from windows cut by the frame's sides (video_stitch)

    def add(self, pos: int, reading: LineReading, layer: int, samples: int) -> None:
        if any(reading.sides) or self.joined is not None:
            piece = trim_cut(reading.text, *reading.sides)
            self.joined = extend(self.joined, piece) if self.joined is not None else piece
        self.last, self.latest, self.box, self.layer = pos, reading.text, reading.box, layer
        self.missed, self.left = 0, False
        self.in_view += samples
        if (not reading.clipped, reading.confidence) > (not self.best.clipped, self.best.confidence):
            self.best = reading

    @property
    def text(self) -> str:
        """The best reading, or the assembled line when that holds more."""
        if self.joined is not None and len(self.joined) > len(self.best.text):
            return self.joined
        return self.best.text


@dataclass
class Section:
    """Frames between cuts: when it starts and whether its view moved (pan, zoom, scroll)."""

    start: float
    moved: bool = False


@dataclass
class _Frame:
    words: FrameWords
    lines: list[LineReading] = field(default_factory=list)


def _read(page: Page) -> _Frame:
    """A frame's words (for motion) and lines (for tracking), duplicate lines reduced to the best."""
    h, w = page.dimensions
    keys, boxes, lines = [], [], []
    for block in page.blocks:
        for line in block.lines:
            members = []
            for word in line.words:
                key = "".join(ch for ch in word.value.casefold() if ch.isalnum())
                if key and word.geometry is not None:
                    x0, y0, x1, y1 = word.geometry
                    members.append(len(keys))
                    keys.append(key)
                    boxes.append((x0 * w, y0 * h, x1 * w, y1 * h))
            text = " ".join(line.render().split())
            if not text or not line.words or line.geometry is None:
                continue
            x0, y0, x1, y1 = line.geometry
            box = np.array([x0 * w, y0 * h, x1 * w, y1 * h])
            conf = sum(wd.confidence for wd in line.words) / len(line.words)
            sides = (x0 <= EDGE, x1 >= 1 - EDGE)
            clipped = any(sides) or y0 <= EDGE or y1 >= 1 - EDGE
            if clipped and sum(ch.isalnum() for ch in text) < SLIVER:
                continue  # a sliver of a line at the frame edge
            lines.append(LineReading(text, float(conf), box, tuple(members), clipped, sides))
    lines.sort(key=lambda r: -r.confidence)
    kept: list[LineReading] = []
    for r in lines:
        if not any(_similarity(r.text, k.text) >= 80.0 and _iou(r.box, k.box[None])[0] >= 0.5 for k in kept):
            kept.append(r)
    words = FrameWords(tuple(keys), np.array(boxes, dtype=np.float64).reshape(-1, 4), (h, w))
    return _Frame(words, kept)


def _iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """IoU of one box with ``float[N, 4]`` boxes."""
    iw = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    ih = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = iw * ih
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    union = area + areas - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def _cover(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Intersection over the smaller area, one box against ``float[N, 4]``."""
    iw = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    ih = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    small = np.minimum(area, areas)
    return np.where(small > 0, iw * ih / np.where(small > 0, small, 1), 0.0)


def _inside(box: np.ndarray, size: tuple[int, int], tolerance: float = VIEW_TOLERANCE) -> bool:
    h, w = size
    tol = tolerance * max(h, w)
    return bool(box[0] >= -tol and box[1] >= -tol and box[2] <= w + tol and box[3] <= h + tol)


def _match(tracks: list[Track], readings: list[LineReading], config: TimelineOptions) -> list[Track | None]:
    """Greedy one-to-one assignment of readings to tracks (``None``: a new track), best pairs first."""
    if not tracks or not readings:
        return [None] * len(readings)
    boxes = np.stack([t.box for t in tracks])
    pairs = []
    for oi, r in enumerate(readings):
        ious, covers = _iou(r.box, boxes), _cover(r.box, boxes)
        for ti in np.flatnonzero((ious >= config.min_iou) | (covers >= 0.6)):
            t = tracks[ti]
            sim = max(_similarity(t.latest, r.text), _similarity(t.best.text, r.text))
            if sim >= config.min_similarity and ious[ti] >= config.min_iou:
                pairs.append((sim / 100.0 + ious[ti], int(ti), oi))
                continue
            if covers[ti] >= 0.6 and min(len(t.latest), len(r.text)) >= 4:
                part = max(
                    fuzz.partial_ratio(t.latest.casefold(), r.text.casefold()),
                    fuzz.partial_ratio(t.best.text.casefold(), r.text.casefold()),
                )
                if part >= 90:
                    pairs.append((part / 100.0 + covers[ti] - 1.0, int(ti), oi))
                    continue
            if any(r.sides) and ious[ti] >= config.min_iou and join(t.latest, r.text) is not None:
                pairs.append((ious[ti], int(ti), oi))  # the next window of a line wider than the frame
    pairs.sort(reverse=True)
    used: set[int] = set()
    owner: list[Track | None] = [None] * len(readings)
    for _, ti, oi in pairs:
        if ti not in used and owner[oi] is None:
            used.add(ti)
            owner[oi] = tracks[ti]
    return owner


def _carry(boxes: np.ndarray, motion: Motion, words: FrameWords) -> np.ndarray:
    """Where lines at ``boxes`` (``float[N, 4]``) on the previous frame are now: each moved with the first
    layer that brings it onto one of that layer's words (the dominant motion when none does)."""
    out = apply(motion.layers[0], boxes)
    settled = np.zeros(len(boxes), bool)
    centres = words.centres
    for matrix, members in zip(motion.layers, motion.members):
        moved = apply(matrix, boxes)
        pts = centres[sorted(members)] if members else np.zeros((0, 2))
        inside = (
            (pts[None, :, 0] >= moved[:, None, 0])
            & (pts[None, :, 0] <= moved[:, None, 2])
            & (pts[None, :, 1] >= moved[:, None, 1])
            & (pts[None, :, 1] <= moved[:, None, 3])
        ).any(axis=1)
        take = inside & ~settled
        out[take] = moved[take]
        settled |= inside
    return out


def _moved(matrix: np.ndarray, size: tuple[int, int]) -> bool:
    h, w = size
    frame = np.array([[0.0, 0.0, w, h]])
    return bool(np.abs(apply(matrix, frame) - frame).max() > MOVED * max(h, w))


def track_lines(
    frames: Sequence[Page],
    idx: Sequence[int],
    next_idx: Sequence[int],
    times: Sequence[float],
    config: TimelineOptions = TimelineOptions(),
) -> tuple[list[Track], list[Section]]:
    """Follow the lines of time-sorted ``frames`` (sample positions ``idx``, each frame standing for the
    samples up to ``next_idx``); returns the kept tracks (flicker removed) and the sections."""
    active: list[Track] = []
    done: list[Track] = []
    sections = [Section(float(times[0]))] if frames else []
    canvas = IDENTITY.copy()  # current frame pixels -> section canvas pixels
    views: list[np.ndarray] = []  # canvas matrix of every frame
    section_of: list[int] = []
    prev: FrameWords | None = None
    for pos, page in enumerate(frames):
        frame = _read(page)
        samples = next_idx[pos] - idx[pos]
        expired = [t for t in active if t.missed > config.max_gap]
        done.extend(expired)
        active = [t for t in active if t.missed <= config.max_gap]
        motion: Motion | None = None
        if prev is not None and frame.words.keys:
            motion = estimate_motion(prev, frame.words)
            if motion is None:  # text before and now, nothing in common: a cut
                sections.append(Section(float(times[pos])))
                canvas = IDENTITY.copy()
            else:
                if active:
                    carried = _carry(np.stack([t.box for t in active]), motion, frame.words)
                    for t, box in zip(active, carried):
                        t.box = box
                canvas = compose(canvas, invert(motion.layers[0]))
                sections[-1].moved = sections[-1].moved or _moved(canvas, frame.words.size)
        if frame.words.keys:
            prev = frame.words
        views.append(canvas)
        section_of.append(len(sections) - 1)
        matched: set[int] = set()
        for owner, reading in zip(_match(active, frame.lines, config), frame.lines):
            layer = motion.layer_of(reading.words) if motion is not None else 0
            if owner is None:
                owner = Track(
                    pos,
                    pos,
                    reading.box,
                    reading,
                    reading.text,
                    apply(canvas, reading.box[None])[0],
                    len(sections) - 1,
                    layer,
                )
                active.append(owner)
            owner.add(pos, reading, layer, samples)
            if owner.best is reading:
                owner.canvas = apply(canvas, reading.box[None])[0]
            matched.add(id(owner))
        for t in active:
            if id(t) in matched:
                continue
            if _inside(t.box, frame.words.size):
                t.missed += samples
                t.in_view += samples
            else:
                t.left = True
    done.extend(active)

    def enough(t: Track) -> bool:
        need = (
            config.moving_min_frames
            if sections[t.section].moved and config.moving_min_frames
            else config.min_frames
        )
        return next_idx[t.last] - idx[t.first] >= need or (t.left and t.in_view < need and not t.best.clipped)

    kept = [t for t in done if enough(t)]
    size = frames[0].dimensions if frames else (0, 0)
    for t in kept:
        if sections[t.section].moved and t.layer == 0:
            _interpolate(t, views, section_of, times, size)
    return kept, sections


def _interpolate(
    track: Track,
    views: list[np.ndarray],
    section_of: list[int],
    times: Sequence[float],
    size: tuple[int, int],
) -> None:
    """Moving text: the times its box crossed the frame edge (linear in the motion between the samples around
    the first and last frames that show it whole), instead of the sample times."""

    def box_at(k: int) -> np.ndarray:
        return apply(invert(views[k]), track.canvas[None])[0]

    lo = track.first - 1 if track.first > 0 and section_of[track.first - 1] == track.section else track.first
    hi = (
        track.last + 1
        if track.last + 1 < len(views) and section_of[track.last + 1] == track.section
        else track.last
    )
    boxes = {k: box_at(k) for k in range(lo, hi + 1)}
    whole = [k for k in range(lo, hi + 1) if _inside(boxes[k], size, 0.0)]
    if not whole:
        return
    k0, k1 = whole[0], whole[-1]
    if k0 > lo:
        track.start = times[k0 - 1] + _entering(boxes[k0 - 1], boxes[k0], size) * (times[k0] - times[k0 - 1])
    if k1 < hi:
        track.end = times[k1] + (1 - _entering(boxes[k1 + 1], boxes[k1], size)) * (times[k1 + 1] - times[k1])


def _entering(outside: np.ndarray, inside: np.ndarray, size: tuple[int, int]) -> float:
    """The fraction of the way from ``outside`` to ``inside`` (boxes moving linearly) at which the box is
    wholly inside the frame."""
    h, w = size
    need = 0.0
    for i, limit, low in ((0, 0.0, True), (1, 0.0, True), (2, float(w), False), (3, float(h), False)):
        a, b = float(outside[i]), float(inside[i])
        if (a < limit if low else a > limit) and a != b:
            need = max(need, (limit - a) / (b - a))
    return min(1.0, max(0.0, need))
