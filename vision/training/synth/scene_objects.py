"""Text objects of scene photos, drawn in their own axis-aligned frame (see :mod:`.scene_warp`).

Kinds: ``sign`` (a panel, 1-3 centred lines, often capitals, optional border), ``label`` (a sticker or price
tag: 1-5 small left-aligned lines, prices and codes), ``loose`` (letters painted or mounted straight on the
surface: no panel, colours from the photo, optional outline or drop shadow), ``subtitle`` (white or yellow
text with a dark outline), ``caption`` (a bar behind a line of text) and ``ui`` (rows of small text on a flat
theme colour). Word boxes follow the project's convention (ink horizontally, cap line to descender line
vertically, :mod:`vision.training.synth.pdf_pages`); words marked illegible (``###``: washed out, or too
small once placed) become ignore boxes, masked out of the loss.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
from PIL import Image, ImageDraw

from vision.training.losses.db import db_targets
from vision.training.synth.pages import PageRenderer, _font, quantize_size
from vision.training.synth.pdf_pages import CAP, DESC
from vision.training.synth.photos import PhotoBank, contrasting, mean_colour, texture
from vision.training.synth.scene_warp import Layer

__all__ = ["OBJECT_KINDS", "TextBlock", "text_block", "text_object"]

OBJECT_KINDS = ("sign", "label", "loose", "subtitle", "caption", "ui")


class TextBlock:
    """Lines of words drawn as coverage: ``ink float32[h, w]`` in [0, 1] and word ``boxes float32[N, 4]``."""

    def __init__(self, ink: np.ndarray, boxes: np.ndarray, texts: list[str]) -> None:
        self.ink, self.boxes, self.texts = ink, boxes, texts


def _price(rng: np.random.Generator) -> str:
    v = float(np.exp(rng.uniform(0, 6)))
    cur = ("$", "£", "€", "", "")[int(rng.integers(5))]
    return f"{cur}{v:.2f}" if rng.random() < 0.7 else f"{v:.2f}{cur}"


def text_block(renderer: PageRenderer, rng: np.random.Generator, size: int, lines: int, words: tuple[int, int],
               *, upper: float = 0.5, align: str = "center", prices: float = 0.0, margin: float = 0.6,
               spacing: float = 1.25) -> TextBlock:
    """``lines`` lines of ``words`` words each in one font of pixel ``size`` (see the module docstring)."""
    font = renderer._pick_font(rng)
    size = quantize_size(size)
    f = _font(str(font.path), size)
    gap = f.getlength(" ") * float(rng.uniform(0.8, 1.6))
    rows: list[list[str]] = []
    up = rng.random() < upper
    for _ in range(lines):
        n = int(rng.integers(words[0], words[1] + 1))
        row = [_price(rng) if rng.random() < prices else renderer.word(rng, font, upper=up) for _ in range(n)]
        rows.append([w[:18] for w in row])
    widths = [sum(f.getlength(w) for w in row) + gap * (len(row) - 1) for row in rows]
    pad = int(size * margin) + 2
    lead = size * spacing
    w = int(max(widths) + 2 * pad) + 1
    h = int(lead * (lines - 1) + size * (CAP + DESC) + 2 * pad) + 1
    img = Image.new("L", (w, h), 0)
    draw = ImageDraw.Draw(img)
    boxes, texts = [], []
    for i, (row, width) in enumerate(zip(rows, widths)):
        baseline = pad + CAP * size + i * lead
        x = pad + {"center": (max(widths) - width) / 2, "left": 0.0, "right": max(widths) - width}[align]
        for word in row:
            draw.text((x, baseline), word, font=f, fill=255, anchor="ls")
            x0, y0, x1, y1 = draw.textbbox((x, baseline), word, font=f, anchor="ls")
            if x1 > x0 and y1 > y0:
                boxes.append((x0, min(y0, baseline - CAP * size), x1, max(y1, baseline + DESC * size)))
                texts.append(word)
            x += f.getlength(word) + gap
    return TextBlock(np.asarray(img, np.float32) / 255.0, np.asarray(boxes, np.float32).reshape(-1, 4), texts)


def _stroke(ink: np.ndarray, px: int) -> np.ndarray:
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * px + 1, 2 * px + 1))
    return cv2.dilate(ink, k)


def _shift(a: np.ndarray, dx: int, dy: int) -> np.ndarray:
    return cv2.warpAffine(a, np.float32([[1, 0, dx], [0, 1, dy]]), (a.shape[1], a.shape[0]))


def text_object(kind: str, renderer: PageRenderer, photos: PhotoBank, rng: np.random.Generator,
                size: int, scale: float, *, min_height: float = 6.0, background: np.ndarray | None = None,
                shrink: float = 0.25) -> Layer:
    """One object of ``kind`` drawn at font ``size`` px; ``scale`` is how much it will be shrunk when placed
    (words under ``min_height`` px after that become ignore boxes). ``background``: the mean colour (RGB)
    of the photo region it will cover (colours of panel-less text are chosen against it)."""
    spec: dict[str, Callable[[], TextBlock]] = {
        "sign": lambda: text_block(renderer, rng, size, int(rng.integers(1, 4)), (1, 3), upper=0.7),
        "label": lambda: text_block(renderer, rng, size, int(rng.integers(1, 6)), (1, 4), upper=0.4,
                                    align="left", prices=0.3, margin=0.4, spacing=1.15),
        "loose": lambda: text_block(renderer, rng, size, int(rng.integers(1, 3)), (1, 3), upper=0.6, margin=0.3),
        "subtitle": lambda: text_block(renderer, rng, size, int(rng.integers(1, 3)), (2, 7), upper=0.05),
        "caption": lambda: text_block(renderer, rng, size, 1, (1, 6), upper=0.4, margin=0.35, align="left"),
        "ui": lambda: text_block(renderer, rng, size, int(rng.integers(2, 9)), (1, 4), upper=0.1,
                                 align="left", margin=0.8, spacing=float(rng.uniform(1.6, 2.6))),
    }
    block = spec[kind]()
    ink = block.ink
    h, w = ink.shape
    panel = kind in ("sign", "label", "caption", "ui") or (kind == "loose" and rng.random() < 0.1)
    if panel:
        if kind == "label" and rng.random() < 0.6:
            base = np.full((h, w, 3), rng.uniform(200, 255), np.float32) + rng.normal(0, 6, 3).astype(np.float32)
            base = np.clip(base, 0, 255)
        elif kind != "ui" and rng.random() < 0.25:
            base = photos.patch(h, w, rng).astype(np.float32)
        else:
            base = texture(h, w, rng).astype(np.float32)
        alpha = np.ones((h, w), np.float32)
        if kind == "caption" and rng.random() < 0.5:
            alpha *= float(rng.uniform(0.55, 0.9))  # a semi-transparent bar
    else:
        col = background if background is not None else mean_colour(photos.patch(8, 8, rng))
        base = np.broadcast_to(np.float32(col), (h, w, 3)).copy()
        alpha = np.zeros((h, w), np.float32)
    bg_col = mean_colour(base)
    fg = contrasting(bg_col, rng, min_delta=float(rng.uniform(35, 110)))
    if kind == "subtitle":
        fg = np.float32([255, 255, 255]) if rng.random() < 0.7 else np.float32([255, 230, 40])
    rgb = base.copy()
    if kind == "subtitle" or (not panel and rng.random() < 0.35) or (panel and rng.random() < 0.08):
        px = max(1, round(size * rng.uniform(0.04, 0.12)))
        outline = _stroke(ink, px)
        if rng.random() < 0.5 or kind == "subtitle":  # outline
            ocol = np.float32([0, 0, 0]) if kind == "subtitle" else contrasting(fg, rng, 80)
            rgb += (ocol - rgb) * outline[..., None]
            alpha = np.maximum(alpha, outline)
        else:  # drop shadow
            d = max(1, int(size * rng.uniform(0.04, 0.1)))
            sh = cv2.GaussianBlur(_shift(ink, d, d), (0, 0), max(0.5, d / 2)) * float(rng.uniform(0.4, 0.9))
            rgb *= (1 - sh[..., None])
            alpha = np.maximum(alpha, sh)
    if panel and kind == "sign" and rng.random() < 0.4:  # a border inside the panel
        t = max(1, int(size * 0.08))
        cv2.rectangle(rgb, (t, t), (w - 1 - t, h - 1 - t), contrasting(bg_col, rng, 50).tolist(), t)
    gradient = np.linspace(float(rng.uniform(0.75, 1.0)), 1.0, w, dtype=np.float32)[None, :, None]
    fg_img = np.broadcast_to(fg, (h, w, 3)) * (gradient if rng.random() < 0.3 else 1.0)
    rgb += (fg_img - rgb) * ink[..., None]
    alpha = np.maximum(alpha, ink)
    if kind == "ui" and rng.random() < 0.5:  # icons and separators: UI clutter, not words
        for _ in range(int(rng.integers(1, 5))):
            y = int(rng.integers(0, h))
            cv2.line(rgb, (0, y), (w, y), (fg * 0.5 + bg_col * 0.5).tolist(), 1)
    heights = (block.boxes[:, 3] - block.boxes[:, 1]) * scale
    illegible = heights < min_height
    if rng.random() < 0.04:  # washed out (glare, extreme blur): ``###``
        illegible[:] = True
        rgb = cv2.GaussianBlur(rgb, (0, 0), size * 0.15)
    boxes, ignore = block.boxes[~illegible], block.boxes[illegible]
    # the shrink is absolute in this frame, so kernels scale with the object (as on pages)
    maps = db_targets(h, w, boxes, ignore=ignore, shrink=shrink, min_side=min_height / max(scale, 1e-3))
    return Layer(np.clip(rgb, 0, 255), np.clip(alpha, 0, 1), maps, boxes, ignore)
