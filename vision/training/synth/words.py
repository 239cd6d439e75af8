"""Synthetic word crops that look like the word boxes a detector cuts from scanned forms and receipts.

One sample: text from :class:`~vision.training.synth.corpus.TextSampler`, drawn with a random real font
at a random size, possibly between neighbouring words and lines (their slivers show at the crop edges),
with underlines, table rules, check boxes, rotation, letter spacing, fake bold; cropped with tight or
loose margins; shrunk to a scan resolution where it is degraded (blur, noise, binarisation, JPEG...);
finally resized to the model height exactly as the predictor does. A seed fixes everything.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.models.recognition.preprocess import HEIGHT, resize_to_height
from vision.models.recognition.vocab import CHECKBOX_CHECKED, CHECKBOX_EMPTY, VOCAB
from vision.training.synth import degrade as D
from vision.training.synth.corpus import TextSampler
from vision.training.synth.fonts import FontInfo, font_covers

__all__ = ["WordSynthConfig", "WordRenderer"]

_BOXES = (CHECKBOX_EMPTY, CHECKBOX_CHECKED)


@dataclass(frozen=True)
class WordSynthConfig:
    """Probabilities and ranges of the word generator (defaults match scanned forms and receipts)."""

    height: int = HEIGHT
    max_width: int = 256
    font_px: tuple[int, int] = (16, 44)
    scan_height: tuple[int, int] = (11, 44)  # crop height in scan pixels before the final resize
    p_low_res: float = 0.6  # share of crops whose scan height is drawn from the low half (11-24 px)
    p_neighbours: float = 0.35
    p_lines: float = 0.2
    p_underline: float = 0.12
    p_rules: float = 0.15
    p_background: float = 0.25
    p_bold: float = 0.08
    p_spacing: float = 0.07
    p_stretch: float = 0.35
    p_rotate: float = 0.35
    max_degrees: float = 3.0
    p_mono: float = 0.3  # extra weight for monospaced/typewriter fonts (typed forms)
    profiles: tuple[tuple[str, float], ...] = (("clean", 0.15), ("scan", 0.45), ("fax", 0.2),
                                               ("receipt", 0.1), ("photo", 0.1))


@functools.lru_cache(maxsize=512)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


class WordRenderer:
    """Callable ``rng -> (image HEIGHTxWx3 uint8 RGB, text)``; picklable for DataLoader workers."""

    def __init__(self, fonts: Sequence[FontInfo], sampler: TextSampler,
                 config: WordSynthConfig = WordSynthConfig()) -> None:
        if not fonts:
            raise ValueError("no fonts given to the word renderer")
        self.config = config
        self.sampler = sampler
        self.paths = [str(f.path) for f in fonts]
        self.coverage = [frozenset(font_covers(f.path, VOCAB)) for f in fonts]
        mono = np.array([1.0 + (config.p_mono * 4 if f.styles & {"mono", "typewriter"} else 0.0) for f in fonts])
        self.font_cum = np.cumsum(mono)
        self.profile_names = [p for p, _ in config.profiles]
        self.profile_cum = np.cumsum([w for _, w in config.profiles])

    # -- public --------------------------------------------------------------------------------------------
    def __call__(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
        for _ in range(8):
            text = self.sampler(rng)
            img = self.render(text, rng)
            if img is not None:
                return img, text
        return self.render("a", rng) or np.full((HEIGHT, 16, 3), 255, np.uint8), "a"  # pragma: no cover

    def render(self, text: str, rng: np.random.Generator) -> np.ndarray | None:
        """Render ``text`` as one degraded crop, or ``None`` if it cannot fit ``max_width``."""
        cfg = self.config
        font_idx = self._pick_font(text, rng)
        if font_idx is None:
            return None
        px = int(rng.integers(*cfg.font_px))
        font = _font(self.paths[font_idx], px)
        canvas, box = self._draw_line(text, font_idx, font, px, rng)
        if rng.random() < cfg.p_rotate:
            canvas, box = _rotate(canvas, box, rng.normal(0, cfg.max_degrees / 2.5), cfg.max_degrees)
        crop = _crop(canvas, box, rng)
        crop = self._colourise(crop, rng)
        if rng.random() < cfg.p_stretch:  # condensed/expanded printing, non-square scan pixels
            crop = cv2.resize(crop, (max(1, int(crop.shape[1] * rng.uniform(0.75, 1.3))), crop.shape[0]))
        lo, hi = cfg.scan_height
        mid = (lo + hi) // 2
        scan_h = int(rng.integers(lo, mid) if rng.random() < cfg.p_low_res else rng.integers(mid, hi))
        scan_w = max(1, round(crop.shape[1] * scan_h / crop.shape[0]))
        crop = cv2.resize(crop, (scan_w, scan_h), interpolation=cv2.INTER_AREA)
        profile = self.profile_names[min(int(np.searchsorted(self.profile_cum, rng.random() * self.profile_cum[-1],
                                                             side="right")), len(self.profile_names) - 1)]
        crop = D.degrade(crop, rng, profile, geometric=False)
        out = resize_to_height(crop, cfg.height)
        if out.shape[1] > cfg.max_width:
            if out.shape[1] > 1.5 * cfg.max_width:
                return None
            out = cv2.resize(out, (cfg.max_width, cfg.height), interpolation=cv2.INTER_AREA)
        return out

    # -- steps ---------------------------------------------------------------------------------------------
    def _pick_font(self, text: str, rng: np.random.Generator) -> int | None:
        needed = set(text) - set(_BOXES) - {" "}
        for _ in range(12):
            i = min(int(np.searchsorted(self.font_cum, rng.random() * self.font_cum[-1], side="right")),
                    len(self.paths) - 1)
            if needed <= self.coverage[i]:
                return i
        return None

    def _draw_line(self, text: str, font_idx: int, font: ImageFont.FreeTypeFont, px: int,
                   rng: np.random.Generator) -> tuple[Image.Image, tuple[float, float, float, float]]:
        """Draw neighbours + the word (+ lines above/below, underline, rules); return canvas and word box."""
        cfg = self.config
        ascent, descent = font.getmetrics()
        space = font.getlength(" ") or px * 0.3
        left = self._neighbour(font_idx, rng) if rng.random() < cfg.p_neighbours else ""
        right = self._neighbour(font_idx, rng) if rng.random() < cfg.p_neighbours else ""
        spacing = float(rng.uniform(0.05, 0.5)) * px if rng.random() < cfg.p_spacing else 0.0
        width = int(font.getlength(left) + font.getlength(right) + 4 * space + _text_len(font, text, spacing)
                    + 4 * px)
        height = 4 * px
        canvas = Image.new("L", (width, height), 255)
        draw = ImageDraw.Draw(canvas)
        ink = int(rng.integers(0, 90))
        stroke = 1 if rng.random() < cfg.p_bold and px >= 22 else 0
        base = int(1.8 * px)
        x = float(px)
        if left:
            draw.text((x, base), left, font=font, fill=ink, anchor="ls", stroke_width=stroke, stroke_fill=ink)
            x += font.getlength(left) + space * float(rng.uniform(0.7, 2.0))
        box = self._draw_word(draw, text, font, (x, base), px, spacing, ink, stroke, rng)
        x = box[2]
        if right:
            draw.text((x + space * float(rng.uniform(0.7, 2.0)), base), right, font=font, fill=ink, anchor="ls",
                      stroke_width=stroke, stroke_fill=ink)
        if rng.random() < cfg.p_lines:  # the lines above/below intrude into loose crops
            gap = float(rng.uniform(0.95, 1.5)) * px
            for sign in (-1, 1):
                if rng.random() < 0.6:
                    filler = " ".join(self._neighbour(font_idx, rng) for _ in range(4))
                    draw.text((float(rng.uniform(0, px)), base + sign * gap), filler, font=font, fill=ink,
                              anchor="ls")
        metric_box = (box[0], base - ascent * 0.8, box[2], base + descent * 0.6)
        if rng.random() < 0.4 and text not in _BOXES:
            box = (box[0], min(box[1], metric_box[1]), box[2], max(box[3], metric_box[3]))
        self._draw_rules(draw, box, base, px, ink, rng)
        return canvas, box

    def _draw_word(self, draw: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont,
                   origin: tuple[float, float], px: int, spacing: float, ink: int, stroke: int,
                   rng: np.random.Generator) -> tuple[float, float, float, float]:
        x, base = origin
        if text in _BOXES:
            return _draw_checkbox(draw, text, x, base, px, ink, rng)
        if spacing <= 0:
            draw.text((x, base), text, font=font, fill=ink, anchor="ls", stroke_width=stroke, stroke_fill=ink)
            l, t, r, b = draw.textbbox((x, base), text, font=font, anchor="ls", stroke_width=stroke)
            return float(l), float(t), float(r), float(b)
        boxes = []
        for ch in text:
            draw.text((x, base), ch, font=font, fill=ink, anchor="ls", stroke_width=stroke, stroke_fill=ink)
            boxes.append(draw.textbbox((x, base), ch, font=font, anchor="ls", stroke_width=stroke))
            x += font.getlength(ch) + spacing
        arr = np.array([b for b in boxes if b[2] > b[0]] or boxes, float)
        return float(arr[:, 0].min()), float(arr[:, 1].min()), float(arr[:, 2].max()), float(arr[:, 3].max())

    def _draw_rules(self, draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float], base: int, px: int,
                    ink: int, rng: np.random.Generator) -> None:
        cfg = self.config
        x0, y0, x1, y1 = box
        thick = int(rng.integers(1, max(2, px // 12) + 1))
        if rng.random() < cfg.p_underline:
            y = base + float(rng.uniform(0.08, 0.35)) * px
            ext = float(rng.uniform(0, 1.0)) * px
            draw.line([(x0 - ext, y), (x1 + ext, y)], fill=ink, width=thick)
        if rng.random() < cfg.p_rules:  # table cell borders just outside the word box
            for side in ("l", "r", "t", "b"):
                if rng.random() < 0.4:
                    d = float(rng.uniform(0.1, 0.6)) * px
                    if side == "l":
                        draw.line([(x0 - d, y0 - px), (x0 - d, y1 + px)], fill=ink, width=thick)
                    elif side == "r":
                        draw.line([(x1 + d, y0 - px), (x1 + d, y1 + px)], fill=ink, width=thick)
                    elif side == "t":
                        draw.line([(x0 - px, y0 - d), (x1 + px, y0 - d)], fill=ink, width=thick)
                    else:
                        draw.line([(x0 - px, y1 + d), (x1 + px, y1 + d)], fill=ink, width=thick)

    def _neighbour(self, font_idx: int, rng: np.random.Generator) -> str:
        for _ in range(4):
            t = self.sampler(rng)
            if set(t) - {" "} <= self.coverage[font_idx]:
                return t
        return "the"

    def _colourise(self, crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rgb = np.repeat(crop[..., None], 3, axis=2)
        if rng.random() < self.config.p_background:
            ink = None
            if rng.random() < 0.25:  # blue/red/green pen or stamp ink
                ink = tuple(int(v) for v in rng.integers(0, 160, 3))
            rgb = D.on_background(rgb, rng, ink=ink)
        return rgb


def _text_len(font: ImageFont.FreeTypeFont, text: str, spacing: float) -> float:
    return font.getlength(text) + spacing * len(text)


def _draw_checkbox(draw: ImageDraw.ImageDraw, text: str, x: float, base: float, px: int, ink: int,
                   rng: np.random.Generator) -> tuple[float, float, float, float]:
    """An empty or checked (tick, cross or filled) square sitting on the baseline."""
    s = float(rng.uniform(0.55, 0.95)) * px
    w = int(rng.integers(1, max(2, px // 10) + 1))
    x0, y0, x1, y1 = x, base - s, x + s, base
    draw.rectangle([x0, y0, x1, y1], outline=ink, width=w)
    if text == CHECKBOX_CHECKED:
        kind = rng.random()
        pad = s * 0.2
        if kind < 0.4:  # cross
            draw.line([(x0 + pad, y0 + pad), (x1 - pad, y1 - pad)], fill=ink, width=w + 1)
            draw.line([(x0 + pad, y1 - pad), (x1 - pad, y0 + pad)], fill=ink, width=w + 1)
        elif kind < 0.8:  # tick, possibly overshooting the box like a hand-drawn one
            over = float(rng.uniform(0, 0.4)) * s
            draw.line([(x0 + pad, y0 + s * 0.55), (x0 + s * 0.42, y1 - pad)], fill=ink, width=w + 1)
            draw.line([(x0 + s * 0.42, y1 - pad), (x1 - pad + over, y0 + pad - over)], fill=ink, width=w + 1)
        else:  # filled
            draw.rectangle([x0 + pad, y0 + pad, x1 - pad, y1 - pad], fill=ink)
    return x0, y0, x1 + 1, y1 + 1


def _rotate(canvas: Image.Image, box: tuple[float, float, float, float], angle: float,
            max_degrees: float) -> tuple[Image.Image, tuple[float, float, float, float]]:
    """Rotate the canvas about the word's centre; the new box is the axis-aligned hull of the old corners."""
    angle = float(np.clip(angle, -max_degrees, max_degrees))
    arr = np.asarray(canvas)
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    m = cv2.getRotationMatrix2D((cx, cy), angle, 1.0)
    out = cv2.warpAffine(arr, m, (arr.shape[1], arr.shape[0]), flags=cv2.INTER_LINEAR, borderValue=255)
    pts = D.transform_points(np.array([[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]]),
                             np.vstack([m, [0, 0, 1]]))
    return Image.fromarray(out), (pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())


def _crop(canvas: Image.Image, box: tuple[float, float, float, float], rng: np.random.Generator) -> np.ndarray:
    """Cut the word box with random (mostly small, sometimes loose or slightly cutting) margins."""
    arr = np.asarray(canvas)
    x0, y0, x1, y1 = box
    h = max(y1 - y0, 2.0)
    loose = rng.random() < 0.12
    top, bottom = (rng.uniform(-0.04, 0.5 if loose else 0.22, 2) * h)
    lm, rm = (rng.uniform(-0.02, 0.8 if loose else 0.3, 2) * h)
    r0, r1 = int(max(0, np.floor(y0 - top))), int(min(arr.shape[0], np.ceil(y1 + bottom)))
    c0, c1 = int(max(0, np.floor(x0 - lm))), int(min(arr.shape[1], np.ceil(x1 + rm)))
    if r1 - r0 < 2 or c1 - c0 < 2:
        r0, r1, c0, c1 = int(y0), int(y1) + 2, int(x0), int(x1) + 2
    return np.ascontiguousarray(arr[r0:r1, c0:c1])
