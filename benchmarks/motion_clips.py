"""Moving-text test videos with per-word ground truth: pan/zoom over pages, scrolling credits, a news ticker.

Every clip is rendered frame by frame (numpy + OpenCV, never all frames in memory), encoded as H.264 with
torchcodec's streaming encoder, and described by a :class:`ClipTruth`: for every word, the first and last
time it is **fully** inside the frame and how long that is (frame count / frame rate); for every line of the
credits and ticker clips, the same times. The scorer is :func:`vision.evaluation.transcript.score_transcript`.

* :func:`pan_zoom_clip`: pages shown one after another (a cut between pages); on each page the camera starts
  at the top, zooms in slowly (x1.25 over the page's time) and pans down to the bottom, drifting sideways.
* :func:`credits_clip`: white lines on black scrolling up at a constant speed.
* :func:`ticker_clip`: a still headline and a band at the bottom whose text scrolls left.

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


def strip_page(
    rows: Sequence[str],
    *,
    width: int,
    text_px: int,
    spacing: float,
    fg: tuple[int, int, int],
    bg: tuple[int, int, int],
    centred: bool = True,
    lead: int = 0,
) -> SourcePage:
    """A tall (or, with one row, long) page of text lines: the film strip of the credits and the ticker."""
    face = font(text_px, bold=True)
    probe = ImageDraw.Draw(Image.new("RGB", (8, 8)))
    widths = [probe.textlength(row, font=face) for row in rows]
    line_h = round(text_px * spacing)
    lead_x = lead if len(rows) == 1 else 0  # one row (a ticker) enters from the side, several from below
    page_w = max(width, int(max(widths, default=0)) + 2 * lead_x + 8)
    page_h = lead * 2 + line_h * len(rows) if len(rows) > 1 else line_h
    image = Image.new("RGB", (page_w, page_h), bg)
    draw = ImageDraw.Draw(image)
    words, lines = [], []
    for r, (row, rw) in enumerate(zip(rows, widths)):
        x = (page_w - rw) / 2 if centred else lead_x
        y = (lead if len(rows) > 1 else 0) + r * line_h + (line_h - text_px) / 2
        members = []
        for token in row.split():
            x0, y0, x1, y1 = draw.textbbox((x, y), token, font=face)
            members.append(len(words))
            words.append((token, (float(x0), float(y0), float(x1), float(y1))))
            x += probe.textlength(token + " ", font=face)
        draw.text(((page_w - rw) / 2 if centred else lead_x, y), row, fill=fg, font=face)
        lines.append((row, tuple(members)))
    return SourcePage(np.asarray(image), tuple(words), tuple(lines))


ROLES = (
    "Director",
    "Producer",
    "Editor",
    "Music",
    "Camera",
    "Sound",
    "Lighting",
    "Costumes",
    "Writer",
    "Casting",
    "Makeup",
    "Stunts",
)
FIRST = (
    "Anna",
    "James",
    "Maria",
    "Robert",
    "Linda",
    "Thomas",
    "Sarah",
    "Daniel",
    "Laura",
    "Peter",
    "Helen",
    "George",
    "Alice",
    "Frank",
    "Emma",
    "Oliver",
)
LAST = (
    "Walker",
    "Turner",
    "Bennett",
    "Harris",
    "Fisher",
    "Morgan",
    "Carter",
    "Hughes",
    "Parker",
    "Foster",
    "Palmer",
    "Wright",
    "Mason",
    "Porter",
    "Stewart",
    "Spencer",
)


def credit_rows(count: int, seed: int = 0) -> list[str]:
    """``count`` distinct credit lines ``Role First Last``."""
    rng = np.random.default_rng(seed)
    rows: list[str] = []
    while len(rows) < count:
        row = f"{rng.choice(ROLES)} {rng.choice(FIRST)} {rng.choice(LAST)}"
        if row not in rows:
            rows.append(row)
    return rows


def credits_clip(
    path: Path,
    *,
    size: tuple[int, int] = (720, 1280),
    seconds: float = 20.0,
    rate: float = 30,
    lines: int = 24,
    text_px: int | None = None,
    speed: float | None = None,
) -> ClipTruth:
    """Credits scrolling up (``speed`` px/s, default: all lines through in ``seconds``)."""
    h, w = size
    text_px = text_px or max(12, h // 24)
    strip = strip_page(
        credit_rows(lines), width=w, text_px=text_px, spacing=2.0, fg=(255, 255, 255), bg=(0, 0, 0), lead=h
    )
    travel = strip.image.shape[0] - h
    speed = speed or travel / seconds

    def camera(t: float) -> tuple[int, np.ndarray]:
        return 0, np.array([[1, 0, 0], [0, 1, -speed * t]], dtype=np.float64)

    frames, truth = film([strip], camera, size, seconds, rate, background=(0, 0, 0))
    return _encode(path, frames, truth, "credits", size, rate)


NEWS = (
    "Markets rally as central bank holds rates steady . Storm warning issued for the northern coast "
    "tonight . City council approves new bridge over the river . Local team wins the regional final "
    "after extra time . Museum opens exhibition of early photographs"
)


def ticker_clip(
    path: Path,
    *,
    size: tuple[int, int] = (720, 1280),
    seconds: float = 20.0,
    rate: float = 30,
    text: str = NEWS,
    headline: str = "EVENING NEWS",
    speed: float | None = None,
) -> ClipTruth:
    """A still headline, and ``text`` scrolling left through a band at the bottom at ``speed`` px/s (the part
    of ``text`` that has not come into view by ``seconds`` is simply never shown)."""
    h, w = size
    band_h = max(24, h // 12)
    strip = strip_page(
        [text],
        width=w,
        text_px=round(band_h * 0.6),
        spacing=1 / 0.6,
        fg=(15, 15, 15),
        bg=(250, 215, 60),
        centred=False,
        lead=w,
    )  # dark on yellow (see docs/video.md)
    speed = speed or 150.0 * w / 1280  # a typical news ticker: 150 px/s at 720p, about 8 letters a second
    title = strip_page(
        [headline], width=w, text_px=h // 10, spacing=1.4, fg=(20, 20, 20), bg=(235, 235, 225), lead=0
    )
    frames, truth = film(
        [strip],
        lambda t: (0, np.array([[1, 0, -speed * t], [0, 1, h - band_h]], float)),
        size,
        seconds,
        rate,
        background=(0, 0, 0),
    )
    title_truth = [
        Visibility(word, 1, 0.0, (round(seconds * rate) - 1) / rate, round(seconds, 6), round(seconds * rate))
        for word, _ in title.words
    ]
    top = h // 6

    def composed() -> Iterator[np.ndarray]:
        for frame in frames:
            frame[: h - band_h] = (235, 235, 225)
            th, tw = title.image.shape[:2]
            x = (w - min(tw, w)) // 2
            frame[top : top + th, x : x + min(tw, w)] = title.image[:, : min(tw, w)]
            yield frame
        truth.words += title_truth
        truth.lines.append(
            Visibility(headline, 1, 0.0, title_truth[0].last, round(seconds, 6), round(seconds * rate))
        )

    return _encode(path, composed(), truth, "ticker", size, rate)


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
    return _encode(path, frames, truth, "pan_zoom", size, rate)


def _encode(
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
