"""Synthetic word crops that look like the word boxes a detector cuts from scanned forms and receipts.

One sample: text from :class:`~vision.training.synth.corpus.TextSampler`, drawn with a random real font
at a random size, possibly between neighbouring words and lines (their slivers show at the crop edges),
with underlines, table rules, check boxes, rotation, letter spacing, fake bold; cropped with tight or
loose margins; shrunk to a scan resolution where it is degraded (blur, noise, binarisation, JPEG...);
finally resized to the model height exactly as the predictor does. A seed fixes everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.models.recognition.vocab import CHECKBOX_CHECKED, CHECKBOX_EMPTY, VOCAB
from vision.predictors.recognition.preprocess import HEIGHT, resize_to_height
from vision.training.synth import degrade as D
from vision.training.synth.corpus import TextSampler, short_token
from vision.training.synth.fonts import FontInfo, font_covers
from vision.training.synth.glyphs import GlyphCache, TextMask

__all__ = ["WordRenderer", "WordSynthConfig"]

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
    p_sliver: float = 0.0  # given a neighbour, chance that the crop reaches into it
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
    p_dust: float = 0.0  # chance of a few unlabelled ink specks around the word (photocopy dust)
    p_initials: float = 0.0  # share of texts that are a name's initial ("J."), the letter and period alone
    p_short: float = 0.0  # share of texts that are one or two characters alone ("mm", "$", "-", "5%")
    p_edge_cut: float = 0.0  # per side, chance that the box cuts into the word's own ink (label unchanged)
    profiles: tuple[tuple[str, float], ...] = (("clean", 0.15), ("scan", 0.45), ("fax", 0.2),
                                               ("receipt", 0.1), ("photo", 0.1))


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
        self.glyphs = GlyphCache()

    # -- public --------------------------------------------------------------------------------------------
    def prewarm(self, processes: int = 1, *, top_chars: int = 120, probe: int = 4000, extra: str = "") -> int:
        """Render, once and in ``processes`` processes, every font's glyphs of the ``top_chars`` most frequent
        characters (counted over ``probe`` texts of the sampler) at every size; returns the glyphs cached.

        Call it before DataLoader workers start: forked workers share these glyphs instead of each spending
        its first minutes rendering them (rarer ones are still rendered on first use). The 120 most frequent
        characters are 98% of the drawn ones (measured over 100k texts of the default mix). Samples do not
        change: a cached glyph is the bitmap a lazy render gives, and the probe uses its own random stream.
        ``extra`` adds characters (a multilingual mix draws accented letters far more often than the probe).
        """
        counts: Counter[str] = Counter()
        rng = np.random.default_rng([0x6C79, probe])
        for _ in range(probe):
            counts.update(self.sampler(rng))
        common = {c for c in sorted(counts, key=lambda c: (-counts[c], c))[:top_chars]} | {" "} | set(extra)
        common -= set(_BOXES)
        sizes = sorted({int(np.clip(s, *self.config.font_px)) for s in _SIZES})
        jobs = [(path, "".join(c for c in VOCAB if c in common and (c in cover or c == " ")))
                for path, cover in zip(self.paths, self.coverage)]
        return self.glyphs.prewarm(jobs, sizes, processes)

    def __call__(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
        cfg = self.config
        for _ in range(8):
            if cfg.p_initials and rng.random() < cfg.p_initials:
                text = _initial(rng)
            elif cfg.p_short and rng.random() < cfg.p_short:
                text = short_token(rng)
            else:
                text = self.sampler(rng)
            img = self.render(text, rng)
            if img is not None:
                return img, text
        return np.full((self.config.height, 16, 3), 255, np.uint8), ""  # pragma: no cover

    def render(self, text: str, rng: np.random.Generator) -> np.ndarray | None:
        """Render ``text`` as one degraded crop, or ``None`` if it cannot fit ``max_width``."""
        cfg = self.config
        font_idx = self._pick_font(text, rng)
        if font_idx is None:
            return None
        px = int(_SIZES[int(rng.integers(len(_SIZES)))])
        px = int(np.clip(px, *cfg.font_px))
        canvas, box, gaps = self._draw_line(text, font_idx, px, rng)
        if rng.random() < cfg.p_rotate:
            canvas, box = _rotate(canvas, box, rng.normal(0, cfg.max_degrees / 2.5), cfg.max_degrees)
        # Slivers: a detector's box often ends inside the gap to the next word, or just past its first stroke.
        slivers = [g + float(rng.uniform(1, 0.2 * px)) if g is not None and rng.random() < cfg.p_sliver else None
                   for g in gaps]
        cuts = [float(rng.uniform(0.0, 0.07)) * (box[3] - box[1])
                if s is None and cfg.p_edge_cut and rng.random() < cfg.p_edge_cut else None for s in slivers]
        cover = _crop(canvas, box, rng, slivers, cuts)
        ink = int(rng.integers(0, 90))
        grey = (255 - cover.astype(np.uint16) * (255 - ink) // 255).astype(np.uint8)
        crop = self._colourise(grey, rng)
        if rng.random() < cfg.p_stretch:  # condensed/expanded printing, non-square scan pixels
            crop = cv2.resize(crop, (max(1, int(crop.shape[1] * rng.uniform(0.75, 1.3))), crop.shape[0]))
        lo, hi = cfg.scan_height
        mid = (lo + hi) // 2
        scan_h = int(rng.integers(lo, mid) if rng.random() < cfg.p_low_res else rng.integers(mid, hi))
        scan_w = max(1, round(crop.shape[1] * scan_h / crop.shape[0]))
        interp = cv2.INTER_AREA if scan_h < crop.shape[0] else cv2.INTER_LINEAR
        crop = cv2.resize(crop, (scan_w, scan_h), interpolation=interp)
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

    def _draw_line(self, text: str, font_idx: int, px: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, tuple[float, float, float, float],
                                                      list[float | None]]:
        """Ink coverage canvas (uint8, 255 = ink) with neighbours, the word, lines above/below, underline and
        rules; returns it with the word's box and the pixel gaps to the left/right neighbours (None: none)."""
        cfg, path = self.config, self.paths[font_idx]
        ascent, descent = self.glyphs.metrics(path, px)
        space = self.glyphs.glyph(path, px, " ").advance or px * 0.3
        spacing = float(rng.uniform(0.05, 0.5)) * px if rng.random() < cfg.p_spacing else 0.0
        word = _checkbox(text, px, rng) if text in _BOXES else self.glyphs.render(path, px, text, spacing)
        left = self._neighbour(path, font_idx, px, rng) if rng.random() < cfg.p_neighbours else None
        right = self._neighbour(path, font_idx, px, rng) if rng.random() < cfg.p_neighbours else None
        gaps = [space * float(rng.uniform(0.7, 2.0)) for _ in range(2)]
        width = int(sum(m.mask.shape[1] for m in (left, word, right) if m is not None) + sum(gaps) + 4 * px)
        base = 2 * px
        canvas = np.zeros((4 * px + word.mask.shape[0], width), np.uint8)
        x = px
        ink_gaps: list[float | None] = [None, None]
        if left is not None:
            _paste(canvas, left, x, base)
            left_ink_end = x + left.ink_box[2]
            x += int(left.mask.shape[1] + gaps[0])
        _paste(canvas, word, x, base)
        wx0, wy0, wx1, wy1 = word.ink_box
        box = (x + wx0, base - word.baseline + wy0, x + wx1, base - word.baseline + wy1)
        if left is not None:
            ink_gaps[0] = max(0.0, box[0] - left_ink_end)
        if right is not None:
            rx = int(x + word.mask.shape[1] + gaps[1])
            _paste(canvas, right, rx, base)
            ink_gaps[1] = max(0.0, rx + right.ink_box[0] - box[2])
        if rng.random() < cfg.p_lines:  # the lines above/below intrude into loose crops
            gap = int(float(rng.uniform(0.95, 1.5)) * px)
            for sign in (-1, 1):
                if rng.random() < 0.6:
                    filler = self._neighbour(path, font_idx, px, rng, words=3)
                    _paste(canvas, filler, int(rng.uniform(0, 2 * px)), base + sign * gap)
        if text not in _BOXES and rng.random() < 0.4:  # detector boxes often span ascent..descent
            box = (box[0], min(box[1], base - ascent * 0.8), box[2], max(box[3], base + descent * 0.6))
        self._draw_rules(canvas, box, base, px, rng)
        if rng.random() < cfg.p_dust:
            _dust(canvas, box, px, rng)
        if rng.random() < cfg.p_bold:  # fake bold / ink spread at render resolution
            kernel = np.ones((1 + int(rng.random() < 0.5), 2), np.uint8)
            canvas = cv2.dilate(canvas, kernel)
        return canvas, box, ink_gaps

    def _draw_rules(self, canvas: np.ndarray, box: tuple[float, float, float, float], base: int, px: int,
                    rng: np.random.Generator) -> None:
        cfg = self.config
        x0, y0, x1, y1 = (round(v) for v in box)
        thick = int(rng.integers(1, max(2, px // 12) + 1))
        if rng.random() < cfg.p_underline:
            y = int(base + float(rng.uniform(0.08, 0.35)) * px)
            ext = int(float(rng.uniform(0, 1.0)) * px)
            cv2.line(canvas, (x0 - ext, y), (x1 + ext, y), 255, thick)
        if rng.random() < cfg.p_rules:  # table cell borders just outside the word box
            for side in "lrtb":
                if rng.random() < 0.4:
                    d = int(float(rng.uniform(0.1, 0.6)) * px) + 1
                    if side == "l":
                        cv2.line(canvas, (x0 - d, y0 - px), (x0 - d, y1 + px), 255, thick)
                    elif side == "r":
                        cv2.line(canvas, (x1 + d, y0 - px), (x1 + d, y1 + px), 255, thick)
                    elif side == "t":
                        cv2.line(canvas, (x0 - px, y0 - d), (x1 + px, y0 - d), 255, thick)
                    else:
                        cv2.line(canvas, (x0 - px, y1 + d), (x1 + px, y1 + d), 255, thick)

    def _neighbour(self, path: str, font_idx: int, px: int, rng: np.random.Generator, words: int = 1) -> TextMask:
        parts = []
        for _ in range(words):
            t = self.sampler(rng)
            parts.append(t if set(t) - {" "} <= self.coverage[font_idx] else "the")
        return self.glyphs.render(path, px, " ".join(parts).replace(_BOXES[0], "").replace(_BOXES[1], "") or "a")

    def _colourise(self, grey: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rgb = np.repeat(grey[..., None], 3, axis=2)
        if rng.random() < self.config.p_background:
            ink = None
            if rng.random() < 0.25:  # blue/red/green pen or stamp ink
                ink = tuple(int(v) for v in rng.integers(0, 160, 3))
            rgb = D.on_background(rgb, rng, ink=ink)
        return rgb


# Font sizes in pixels: few distinct sizes keep the glyph caches small; the crop is resized anyway.
_SIZES = (16, 18, 20, 22, 25, 28, 32, 36, 40, 44)


def _paste(canvas: np.ndarray, text: TextMask, x: int, baseline: int) -> None:
    """Max-composite a text mask with its baseline at row ``baseline`` and its left edge at ``x`` (clipped)."""
    y = baseline - text.baseline
    h, w = text.mask.shape
    ys, xs = max(0, y), max(0, x)
    ye, xe = min(canvas.shape[0], y + h), min(canvas.shape[1], x + w)
    if ye > ys and xe > xs:
        region = canvas[ys:ye, xs:xe]
        np.maximum(region, text.mask[ys - y:ye - y, xs - x:xe - x], out=region)


def _checkbox(text: str, px: int, rng: np.random.Generator) -> TextMask:
    """An empty or checked (cross, tick or filled) square sitting on the baseline."""
    s = max(6, int(float(rng.uniform(0.55, 0.95)) * px))
    w = int(rng.integers(1, max(2, px // 10) + 1))
    pad = max(2, s // 5)
    mask = np.zeros((s + 2 * pad, s + 2 * pad), np.uint8)
    x0, y0, x1, y1 = pad, pad, pad + s, pad + s
    cv2.rectangle(mask, (x0, y0), (x1, y1), 255, w)
    if text == CHECKBOX_CHECKED:
        kind, inner = rng.random(), max(1, s // 5)
        if kind < 0.4:
            cv2.line(mask, (x0 + inner, y0 + inner), (x1 - inner, y1 - inner), 255, w + 1)
            cv2.line(mask, (x0 + inner, y1 - inner), (x1 - inner, y0 + inner), 255, w + 1)
        elif kind < 0.8:  # a tick, possibly overshooting the box like a hand-drawn one
            over = int(float(rng.uniform(0, 0.35)) * s)
            mid = (x0 + int(s * 0.42), y1 - inner)
            cv2.line(mask, (x0 + inner, y0 + int(s * 0.55)), mid, 255, w + 1)
            cv2.line(mask, mid, (min(x1 - inner + over, mask.shape[1] - 1), max(y0 + inner - over, 0)), 255, w + 1)
        else:
            cv2.rectangle(mask, (x0 + inner, y0 + inner), (x1 - inner, y1 - inner), 255, -1)
    boxes = np.array([[x0, y0, x1 + 1, y1 + 1]], np.float32)
    return TextMask(mask, y1 + 1, boxes)


def _dust(canvas: np.ndarray, box: tuple[float, float, float, float], px: int, rng: np.random.Generator) -> None:
    """Draw 1-3 small ink blobs in the crop's margins, away from the baseline just after the word, where
    a real period or comma would sit: the model must learn that dust is not punctuation."""
    x0, y0, x1, y1 = box
    h = max(y1 - y0, 2.0)
    for _ in range(int(rng.integers(1, 4))):
        r = max(1, round(float(rng.uniform(0.03, 0.09)) * px))
        side = rng.random()
        if side < 0.4:  # above or below the word
            x = rng.uniform(x0, x1)
            y = y0 - rng.uniform(0.05, 0.3) * h if rng.random() < 0.5 else y1 + rng.uniform(0.1, 0.3) * h
        else:  # beside it, at x-height or above (a period sits on the baseline)
            x = x0 - rng.uniform(0.15, 0.4) * h if side < 0.7 else x1 + rng.uniform(0.15, 0.4) * h
            y = rng.uniform(y0, y0 + 0.55 * h)
        cv2.circle(canvas, (int(x), int(y)), r, 255, -1)


def _rotate(canvas: np.ndarray, box: tuple[float, float, float, float], angle: float,
            max_degrees: float) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """Rotate the canvas about the word's centre; the new box is the axis-aligned hull of the old corners."""
    angle = float(np.clip(angle, -max_degrees, max_degrees))
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    m = cv2.getRotationMatrix2D((cx, cy), angle, 1.0)
    out = cv2.warpAffine(canvas, m, (canvas.shape[1], canvas.shape[0]), flags=cv2.INTER_LINEAR, borderValue=0)
    pts = D.transform_points(np.array([[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]]),
                             np.vstack([m, [0, 0, 1]]))
    return out, (pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())


def _initial(rng: np.random.Generator) -> str:
    """A name's initial as forms print it between first and last names: a capital letter and a period."""
    return chr(ord("A") + int(rng.integers(26))) + "."


def _crop(canvas: np.ndarray, box: tuple[float, float, float, float], rng: np.random.Generator,
          slivers: Sequence[float | None] = (None, None), cuts: Sequence[float | None] = (None, None)
          ) -> np.ndarray:
    """Cut the word box with random (mostly small, sometimes loose or slightly cutting) margins; a side with
    a ``slivers`` distance gets exactly that margin (reaching into the neighbouring word), a side with a
    ``cuts`` depth is cut that far inside the ink (annotated and detected boxes often clip the last
    stroke or a final period)."""
    x0, y0, x1, y1 = box
    h = max(y1 - y0, 2.0)
    loose = rng.random() < 0.12
    top, bottom = (rng.uniform(-0.04, 0.5 if loose else 0.22, 2) * h)
    lm, rm = (rng.uniform(-0.02, 0.8 if loose else 0.3, 2) * h)
    lm = slivers[0] if slivers[0] is not None else lm
    rm = slivers[1] if slivers[1] is not None else rm
    if cuts[0] is not None or cuts[1] is not None:  # measured from the word's own ink, not its glyph boxes
        band = canvas[int(y0):int(np.ceil(y1)), int(x0):int(np.ceil(x1))].any(0)
        inked = np.flatnonzero(band)
        if inked.size:
            ink0, ink1 = int(x0) + inked[0], int(x0) + inked[-1] + 1
            lm = x0 - ink0 - cuts[0] if cuts[0] is not None else lm
            rm = ink1 - x1 - cuts[1] if cuts[1] is not None else rm
    r0, r1 = int(max(0, np.floor(y0 - top))), int(min(canvas.shape[0], np.ceil(y1 + bottom)))
    c0, c1 = int(max(0, np.floor(x0 - lm))), int(min(canvas.shape[1], np.ceil(x1 + rm)))
    if r1 - r0 < 2 or c1 - c0 < 2:
        r0, r1 = max(0, int(y0)), min(canvas.shape[0], int(y1) + 2)
        c0, c1 = max(0, int(x0)), min(canvas.shape[1], int(x1) + 2)
    return np.ascontiguousarray(canvas[r0:r1, c0:c1])
