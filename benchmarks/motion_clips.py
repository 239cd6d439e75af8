"""Moving-text test videos with per-word ground truth: pan/zoom over pages, scrolling credits, a news ticker.

Every clip is rendered frame by frame (numpy + OpenCV, never all frames in memory), encoded as H.264 with
torchcodec's streaming encoder, and described by a :class:`ClipTruth`: for every word, the first and last
time it is **fully** inside the frame and how long that is (frame count / frame rate); for every line of the
credits and ticker clips, the same times. The scorer is :func:`vision.evaluation.transcript.score_transcript`.

* :func:`pan_zoom_clip`: pages shown one after another (a cut between pages); on each page the camera starts
  at the top, zooms in slowly (x1.25 over the page's time) and pans down to the bottom, drifting sideways.
* ``scroll_clips.credits_clip`` and ``scroll_clips.ticker_clip``: scrolling credits and a news ticker
  (``benchmarks/scroll_clips.py``, built on :func:`film` and :func:`encode`).

Pages come from an evaluation set (:func:`funsd_pages`, ``benchmarks/video_motion.py``) or are rendered
(:func:`rendered_page`, the tests).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
FONT_BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


@dataclass(frozen=True)
class SourcePage:
    """A page to film: RGB ``uint8[H, W, 3]`` and its words as ``(text, (x0, y0, x1, y1))`` in pixels."""

    image: np.ndarray
    words: tuple[tuple[str, tuple[float, float, float, float]], ...]
    lines: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (text, word indices) where lines are known


@dataclass
class Visibility:
    """When one word (or line) is fully in the frame: first and last frame time, and seconds in view."""

    text: str
    page: int
    first: float | None = None
    last: float | None = None
    seconds: float = 0.0
    frames: int = 0


@dataclass
class ClipTruth:
    """What a generated clip shows."""

    path: str
    kind: str
    size: tuple[int, int]
    rate: float
    seconds: float
    words: list[Visibility] = field(default_factory=list)
    lines: list[Visibility] = field(default_factory=list)

    def save(self, path: Path) -> None:
        """Write as JSON (the benchmark keeps it beside the video)."""
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, path: Path) -> ClipTruth:
        data = json.loads(path.read_text())
        data["words"] = [Visibility(**w) for w in data["words"]]
        data["lines"] = [Visibility(**w) for w in data["lines"]]
        data["size"] = tuple(data["size"])
        return cls(**data)


def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = FONT_BOLD if bold else FONT
    return ImageFont.truetype(str(path), size) if path.is_file() else ImageFont.load_default(size)


def rendered_page(
    rows: Sequence[Sequence[str]],
    *,
    size: tuple[int, int] = (900, 640),
    text_px: int = 28,
    margin: int = 40,
    gap: int = 30,
) -> SourcePage:
    """A white page of black words, one row per entry of ``rows`` (words separated by ``gap`` px)."""
    h, w = size
    image = Image.new("RGB", (w, h), "white")
    draw = ImageDraw.Draw(image)
    face = font(text_px, bold=True)
    words, lines = [], []
    step = (h - 2 * margin) / max(1, len(rows))
    for r, row in enumerate(rows):
        x, y = margin, margin + r * step
        members = []
        for text in row:
            x0, y0, x1, y1 = draw.textbbox((x, y), text, font=face)
            draw.text((x, y), text, fill="black", font=face)
            members.append(len(words))
            words.append((text, (float(x0), float(y0), float(x1), float(y1))))
            x = x1 + gap
        lines.append((" ".join(row), tuple(members)))
    return SourcePage(np.asarray(image), tuple(words), tuple(lines))


def funsd_pages(root: Path, count: int, first: int = 0) -> list[SourcePage]:
    """``count`` pages of a word-level evaluation set (``ignore`` boxes left out)."""
    from vision.evaluation.data import open_set

    pages = []
    for sample in list(open_set(root))[first : first + count]:
        words = tuple(
            (w.text, tuple(float(v) for v in w.box)) for w in sample.words if not w.ignore and w.text.strip()
        )
        pages.append(SourcePage(sample.load_image(), words))  # type: ignore[arg-type]
    return pages


# ------------------------------------------------------------------------------------------ rendering
Camera = Callable[[float], tuple[int, np.ndarray]]  # time -> (page number, 2x3 page-to-frame matrix)


def pan_zoom_camera(
    pages: Sequence[SourcePage], size: tuple[int, int], seconds: float, zoom: float = 0.25, fill: float = 0.75
) -> Camera:
    """Each page gets ``seconds / len(pages)``: scale from ``fill`` of the frame width to ``(1 + zoom)``
    times that, the view pans from the top of the page to its bottom and drifts 5% of the page sideways."""
    h, w = size
    span = seconds / len(pages)

    def at(t: float) -> tuple[int, np.ndarray]:
        p = min(int(t / span), len(pages) - 1)
        u = min(1.0, (t - p * span) / span)
        ph, pw = pages[p].image.shape[:2]
        s = fill * w / pw * (1 + zoom * u)
        view_h = h / s
        cy = view_h / 2 + u * max(0.0, ph - view_h) if ph > view_h else ph / 2
        cx = pw / 2 + 0.05 * pw * (u - 0.5)
        return p, np.array([[s, 0, w / 2 - s * cx], [0, s, h / 2 - s * cy]], dtype=np.float64)

    return at


def _inside(box: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Boxes ``float[N, 4]`` wholly inside a ``size`` frame."""
    h, w = size
    return (box[:, 0] >= 0) & (box[:, 1] >= 0) & (box[:, 2] <= w) & (box[:, 3] <= h)


def _map_boxes(boxes: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Axis-aligned boxes ``float[N, 4]`` through a scale+translation matrix ``2x3``."""
    out = boxes.copy()
    out[:, [0, 2]] = boxes[:, [0, 2]] * m[0, 0] + m[0, 2]
    out[:, [1, 3]] = boxes[:, [1, 3]] * m[1, 1] + m[1, 2]
    return out


def film(
    pages: Sequence[SourcePage],
    camera: Camera,
    size: tuple[int, int],
    seconds: float,
    rate: float,
    background: tuple[int, int, int] = (70, 70, 64),
) -> tuple[Iterator[np.ndarray], ClipTruth]:
    """Frames ``uint8[H, W, 3]`` of ``pages`` seen through ``camera`` and the words' visibility.

    The truth is filled in as the frames are drawn: read it after the iterator is exhausted.
    """
    truth = ClipTruth("", "pan_zoom", size, rate, seconds)
    words = [[Visibility(text, p) for text, _ in page.words] for p, page in enumerate(pages)]
    lines = [[Visibility(text, p) for text, _ in page.lines] for p, page in enumerate(pages)]
    boxes = [np.array([b for _, b in page.words], dtype=np.float64).reshape(-1, 4) for page in pages]
    h, w = size

    def frames() -> Iterator[np.ndarray]:
        for k in range(round(seconds * rate)):
            t = k / rate
            p, m = camera(t)
            inside = _inside(_map_boxes(boxes[p], m), size)
            for i in np.flatnonzero(inside):
                _seen(words[p][i], t, 1 / rate)
            for j, (_, members) in enumerate(pages[p].lines):
                if members and all(inside[i] for i in members):
                    _seen(lines[p][j], t, 1 / rate)
            yield cv2.warpAffine(
                pages[p].image,
                m,
                (w, h),
                flags=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_CONSTANT,
                borderValue=background,
            )
        truth.words = [v for page in words for v in page]
        truth.lines = [v for page in lines for v in page]

    return frames(), truth


def _seen(v: Visibility, t: float, step: float) -> None:
    v.first = t if v.first is None else v.first
    v.last = t
    v.frames += 1
    v.seconds = round(v.frames * step, 6)


def pan_zoom_clip(
    path: Path,
    pages: Sequence[SourcePage],
    *,
    size: tuple[int, int] = (720, 1280),
    seconds: float = 20.0,
    rate: float = 30,
    zoom: float = 0.25,
    fill: float = 0.75,
    background: tuple[int, int, int] = (70, 70, 64),
) -> ClipTruth:
    """Pan and zoom over ``pages`` (see :func:`pan_zoom_camera`) held over a ``background`` desk."""
    camera = pan_zoom_camera(pages, size, seconds, zoom, fill)
    frames, truth = film(pages, camera, size, seconds, rate, background)
    return encode(path, frames, truth, "pan_zoom", size, rate)


def encode(
    path: Path,
    frames: Iterator[np.ndarray],
    truth: ClipTruth,
    kind: str,
    size: tuple[int, int],
    rate: float,
    crf: int = 18,
) -> ClipTruth:
    """H.264 (libx264 ``veryfast``, CRF 18), one second of frames at a time; returns the truth."""
    import torch
    from torchcodec.encoders import Encoder

    h, w = size
    encoder = Encoder()
    stream = encoder.add_video(
        height=h, width=w, frame_rate=rate, codec="libx264", preset="veryfast", crf=crf
    )
    tmp = path.with_name(f".part-{path.name}")  # keeps the suffix: FFmpeg picks the container by it
    chunk: list[torch.Tensor] = []
    with encoder.open_file(str(tmp)):
        for frame in frames:
            chunk.append(torch.from_numpy(np.ascontiguousarray(frame)).permute(2, 0, 1))
            if len(chunk) >= max(1, int(rate)):
                stream.add_frames(torch.stack(chunk))
                chunk = []
        if chunk:
            stream.add_frames(torch.stack(chunk))
    tmp.replace(path)
    truth.path, truth.kind = str(path), kind
    return truth
