"""Generated test videos and a deterministic stand-in recognizer, shared by the video tests.

Videos: words drawn with Pillow (black on white) at known times, encoded with torchcodec's encoder (constant
frame rate) or with the ``ffmpeg`` CLI's concat demuxer (variable frame rate, per-frame durations). The true
on-screen span of each word is computed from the frames actually drawn, so tests compare against what the
file shows, not against the intended schedule.

``TemplateOCR`` reads those words back from decoded frames without any model: dark rows and columns give
one box per word, and each box is named by the best binary-mask IoU against templates of the known words
rendered with the same font. It stands in for the OCR predictor until trained weights ship.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw, ImageFont
from rapidfuzz import fuzz

from vision.io.page import PageImage
from vision.structures import Block, Document, Line, Page, Word

FONT_PATH = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
SIZE = (256, 448)  # (height, width): even sides for yuv420p, multiples of 32 for detectors
FONT_SIZE = 36
ROW_Y = (24, 104, 184)  # top of each text row, in pixels


@dataclass(frozen=True)
class Caption:
    """``text`` drawn on row ``row`` in every frame whose start time lies in ``[start, end)``."""

    text: str
    start: float
    end: float
    row: int


# HELLO and VIDEO share a row (one replaces the other after a gap); WORLD overlaps both in time; NOISE is
# on screen for 0.2 s, so a 1 fps sampler sees it in one frame at most: the flicker rule must drop it.
CAPTIONS = (
    Caption("HELLO", 0.0, 3.5, 0),
    Caption("WORLD", 1.3, 6.2, 1),
    Caption("VIDEO", 4.6, 9.0, 0),
    Caption("NOISE", 6.9, 7.1, 2),
)
DURATION = 9.0


def font(size: int = FONT_SIZE) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    if FONT_PATH.is_file():
        return ImageFont.truetype(str(FONT_PATH), size)
    return ImageFont.load_default(size=size)


def draw_frame(texts: list[Caption], size: tuple[int, int] = SIZE) -> np.ndarray:
    """An RGB ``(H, W, 3)`` uint8 frame with ``texts`` drawn at their rows, left-aligned at x = 24."""
    image = Image.new("RGB", (size[1], size[0]), "white")
    draw = ImageDraw.Draw(image)
    for cap in texts:
        draw.text((24, ROW_Y[cap.row]), cap.text, fill="black", font=font())
    return np.asarray(image)


def visible(captions: tuple[Caption, ...], t: float) -> list[Caption]:
    return [c for c in captions if c.start <= t < c.end]


@dataclass(frozen=True)
class Clip:
    """A generated video: its file, the start time of each encoded frame and the stream's end time."""

    path: Path
    starts: tuple[float, ...]
    end: float
    captions: tuple[Caption, ...] = CAPTIONS

    def truth(self) -> dict[str, tuple[float, float]]:
        """What the file shows: ``text -> (first frame start drawn, end of the last frame drawn)``."""
        bounds = [*self.starts, self.end]
        spans: dict[str, tuple[float, float]] = {}
        for k, t in enumerate(self.starts):
            for cap in visible(self.captions, t):
                first = spans.get(cap.text, (t, 0.0))[0]
                spans[cap.text] = (first, bounds[k + 1])
        return spans


def _clip(path: Path, starts: list[float], captions: tuple[Caption, ...]) -> Clip:
    """Check the file's frame times against the intended ones and read its end from the stream."""
    from torchcodec.decoders import VideoDecoder

    decoder = VideoDecoder(str(path))
    pts = decoder.get_frames_in_range(0, len(decoder)).pts_seconds.tolist()
    if len(pts) != len(starts) or max(abs(a - b) for a, b in zip(pts, starts)) > 1e-3:
        raise AssertionError(
            f"{path}: encoded frame times {pts[:8]}... differ from the intended {starts[:8]}..."
        )
    return Clip(path, tuple(starts), float(decoder.metadata.end_stream_seconds), captions)


def encode_cfr(
    path: Path,
    *,
    rate: float = 10.0,
    captions: tuple[Caption, ...] = CAPTIONS,
    duration: float = DURATION,
    codec: str | None = None,
    options: dict | None = None,
) -> Clip:
    """Encode a constant-rate video with torchcodec (container from the suffix; codec and its ``to_file``
    options as given, default: the container's codec at CRF 12, near-lossless for H.264)."""
    from torchcodec.encoders import VideoEncoder

    starts = [k / rate for k in range(round(duration * rate))]
    cache: dict[tuple[str, ...], np.ndarray] = {}
    frames = []
    for t in starts:
        shown = visible(captions, t)
        key = tuple(c.text for c in shown)
        if key not in cache:
            cache[key] = draw_frame(shown)
        frames.append(torch.from_numpy(cache[key].copy()).permute(2, 0, 1))
    options = {"crf": 12} if options is None else options
    VideoEncoder(torch.stack(frames), frame_rate=rate).to_file(str(path), codec=codec, **options)
    return _clip(path, starts, captions)


def vfr_starts(duration: float = DURATION) -> list[float]:
    """Irregular frame start times: durations cycle through 0.04 s to 0.92 s (a long still, then bursts).

    Every duration is a multiple of 0.04 s, the time base ffmpeg's concat demuxer gives PNG inputs, so the
    encoded timestamps are exactly these starts.
    """
    steps = (0.04, 0.92, 0.12, 0.36, 0.04, 0.04, 0.6, 0.2)
    starts, t, k = [], 0.0, 0
    while t < duration - 1e-9:
        starts.append(round(t, 3))
        t += steps[k % len(steps)]
        k += 1
    return starts


def encode_vfr(path: Path, *, captions: tuple[Caption, ...] = CAPTIONS, duration: float = DURATION) -> Clip:
    """Encode a variable-frame-rate Matroska file (H.264) with the ffmpeg CLI's concat demuxer."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise RuntimeError(
            "the ffmpeg CLI is needed for the variable-frame-rate fixture (make setup installs it)"
        )
    starts = vfr_starts(duration)
    bounds = [*starts, duration]
    with tempfile.TemporaryDirectory() as tmp:
        lines = ["ffconcat version 1.0"]
        for k, t in enumerate(starts):
            png = Path(tmp) / f"{k:04d}.png"
            Image.fromarray(draw_frame(visible(captions, t))).save(png)
            lines += [f"file '{png}'", f"duration {bounds[k + 1] - t:.3f}"]
        listing = Path(tmp) / "list.ffconcat"
        listing.write_text("\n".join(lines) + "\n")
        subprocess.run(
            [
                ffmpeg,
                "-loglevel",
                "error",
                "-y",
                "-f",
                "concat",
                "-safe",
                "0",
                "-i",
                str(listing),
                "-fps_mode",
                "vfr",
                "-c:v",
                "libx264",
                "-crf",
                "12",
                "-pix_fmt",
                "yuv420p",
                str(path),
            ],
            check=True,
            timeout=60,
        )
    return _clip(path, starts, captions)


class TemplateOCR:
    """Deterministic OCR stand-in for frames drawn by :func:`draw_frame` (``list[PageImage] -> Document``)."""

    def __init__(self, vocabulary: list[str], min_iou: float = 0.6) -> None:
        self.min_iou = min_iou
        self.templates = {}
        for word in vocabulary:
            image = Image.new("L", (len(word) * FONT_SIZE + 8, 2 * FONT_SIZE), 255)
            ImageDraw.Draw(image).text((4, 4), word, fill=0, font=font())
            self.templates[word] = _tight(np.asarray(image) < 128)
        self.calls: list[list[str]] = []  # sources of each batch, so tests can see cross-video batching

    def __call__(self, pages: list[PageImage]) -> Document:
        self.calls.append([p.source for p in pages])
        return Document(pages=[self._read(p) for p in pages])

    def _read(self, page: PageImage) -> Page:
        dark = page.image.mean(axis=2) < 128
        h, w = dark.shape
        lines = []
        for y0, y1 in _runs(dark.any(axis=1), gap=3):
            for x0, x1 in _runs(dark[y0:y1].any(axis=0), gap=y1 - y0):
                text, score = self._name(dark[y0:y1, x0:x1])
                if score >= self.min_iou:
                    word = Word(text, score, (x0 / w, y0 / h, x1 / w, y1 / h))
                    lines.append(Line([word]))
        return Page(
            page_idx=page.index,
            dimensions=(h, w),
            blocks=[Block([ln]) for ln in lines],
            timestamp=page.timestamp,
            source=page.source,
        )

    def _name(self, crop: np.ndarray) -> tuple[str, float]:
        best, score = "", 0.0
        for word, tmpl in self.templates.items():
            resized = np.asarray(Image.fromarray(crop).resize((tmpl.shape[1], tmpl.shape[0]))) > 0
            union = np.count_nonzero(resized | tmpl)
            iou = np.count_nonzero(resized & tmpl) / union if union else 0.0
            if iou > score:
                best, score = word, float(iou)
        return best, score


def _tight(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask)
    return mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _runs(flags: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """``[start, stop)`` runs of True, joining runs separated by fewer than ``gap`` False entries."""
    idx = np.flatnonzero(flags)
    if idx.size == 0:
        return []
    cuts = np.flatnonzero(np.diff(idx) > gap)
    starts = [int(idx[0])] + [int(idx[c + 1]) for c in cuts]
    stops = [int(idx[c]) + 1 for c in cuts] + [int(idx[-1]) + 1]
    return list(zip(starts, stops))


# ----------------------------------------------------------------------------------------------- checks
_SRT = r"(\d{2}):(\d{2}):(\d{2}),(\d{3})"
_VTT = r"(\d{2}):(\d{2}):(\d{2})\.(\d{3})"


def _seconds(groups: tuple[str, ...]) -> float:
    h, m, s, ms = (int(g) for g in groups)
    return h * 3600 + m * 60 + s + ms / 1000


def parse_cues(text: str, *, vtt: bool) -> list[tuple[float, float, str]]:
    """Parse SubRip or WebVTT text strictly (numbering, timing lines, non-empty payloads, start < end)."""
    stamp = _VTT if vtt else _SRT
    if vtt:
        assert text.startswith("WEBVTT\n\n"), text[:40]
        text = text[len("WEBVTT\n\n") :]
    cues = []
    for n, block in enumerate(b for b in text.strip("\n").split("\n\n") if b):
        lines = block.split("\n")
        if not vtt:
            assert lines.pop(0) == str(n + 1), block
        match = re.fullmatch(f"{stamp} --> {stamp}", lines[0])
        assert match, lines[0]
        start, end = _seconds(match.groups()[:4]), _seconds(match.groups()[4:])
        assert start < end and lines[1:] and all(line.strip() for line in lines[1:]), block
        cues.append((start, end, "\n".join(lines[1:])))
    return cues


def check_subtitles(doc: Document) -> None:
    """SRT and WebVTT of ``doc`` parse strictly and carry its timeline (times to the millisecond)."""
    expected = sorted((round(e.start, 3), round(e.end, 3), e.text) for e in doc.timeline)
    for vtt, text in ((False, doc.to_srt()), (True, doc.to_vtt())):
        cues = parse_cues(text, vtt=vtt)
        assert [t for a, b, _ in cues for t in (a, b)] == pytest.approx(
            [t for a, b, _ in expected for t in (a, b)], abs=1e-3
        )
        assert [t for _, _, t in cues] == [t for _, _, t in expected]


def check_timeline(doc: Document, clip: Clip, interval: float) -> None:
    """The must-show property: every caption on screen for two intervals or more is found once, with start
    and end within one interval of what the file shows; nothing shown under one interval, nothing spurious."""
    found: dict[str, Any] = {}
    for entry in doc.timeline:
        scores = {c.text: fuzz.ratio(entry.text.upper(), c.text) for c in clip.captions}
        name = max(scores, key=scores.__getitem__)
        assert scores[name] >= 80, f"spurious entry {entry}"
        assert name not in found, f"duplicate entries for {name}: {found[name]} and {entry}"
        found[name] = entry
    for text, (start, end) in clip.truth().items():
        if end - start >= 2 * interval:
            assert text in found, f"{text} ({start}-{end}) missing from {doc.timeline}"
        elif end - start < interval:
            assert text not in found, (
                f"{text} shown {end - start:.2f} s < one interval, kept as {found[text]}"
            )
        if text in found:
            entry = found[text]
            assert abs(entry.start - start) <= interval + 1e-6, (text, entry, start)
            assert abs(entry.end - end) <= interval + 1e-6, (text, entry, end)
