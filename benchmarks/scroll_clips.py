"""Scrolling text clips with per-word truth: credits rolling up, a news ticker under a still headline.

Built on :mod:`motion_clips` (the same :class:`~motion_clips.ClipTruth`, :func:`~motion_clips.film` and
:func:`~motion_clips.encode`): the text is drawn once on a tall (credits) or long (ticker) strip, and a camera
slides over it at a constant speed.

* :func:`credits_clip`: white lines on black scrolling up at a constant speed.
* :func:`ticker_clip`: a still headline and a band at the bottom whose text scrolls left.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from motion_clips import ClipTruth, SourcePage, Visibility, encode, film, font
from PIL import Image, ImageDraw


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
    return encode(path, frames, truth, "credits", size, rate)


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

    return encode(path, composed(), truth, "ticker", size, rate)
