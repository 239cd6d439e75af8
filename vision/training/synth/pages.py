"""Synthetic document pages with exact word boxes, drawn with Pillow.

Layouts: multi-column articles, business letters, forms (labels, fill-in values, rules, boxes, check
boxes), receipts (narrow, monospace, upper case), tables, invoices and slides, with font sizes from about
6 to 72 pt at ~100 dpi. Non-text clutter (rules, boxes, logos, signatures, barcodes) is drawn unlabelled
so a detector learns to leave it alone.

Word boxes follow the convention of :mod:`vision.training.synth.pdf_pages`: glyph ink horizontally, cap
line to descender line vertically (``CAP``/``DESC`` em around the baseline), widened to the ink.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.training.synth.fonts import FontInfo
from vision.training.synth.letter_spacing import draw_tracked, tracked_length
from vision.training.synth.pdf_pages import CAP, DESC

__all__ = [
    "SynthPage",
    "PageRenderer",
    "LAYOUTS",
    "LAYOUT_WEIGHTS",
    "SEPARATOR_GLYPHS",
    "quantize_size",
    "carry_page_fonts",
    "write_coverage",
    "COVERAGE_FILE",
]

COVERAGE_FILE = "coverage.json"

LAYOUTS = ("article", "letter", "form", "receipt", "table", "invoice", "slide")
# How often each layout is drawn when none is asked for (PageRenderer's ``layouts`` overrides).
LAYOUT_WEIGHTS: dict[str, float] = {"article": 0.2, "letter": 0.12, "form": 0.24, "receipt": 0.16,
                                    "table": 0.12, "invoice": 0.1, "slide": 0.06}
_ASCII = frozenset(chr(c) for c in range(33, 127))
SEPARATOR_GLYPHS = "*-=#~_."
"""Glyphs receipts repeat across a row as a printed rule (``PageRenderer(separator_rows=)``)."""


@dataclass
class SynthPage:
    """A rendered page: ``image uint8[H, W, 3]``, word ``boxes float32[N, 4]`` (pixels), their texts."""

    image: np.ndarray
    boxes: np.ndarray
    texts: list[str]
    layout: str = ""


_SIZES = np.array(
    [
        6,
        7,
        8,
        9,
        10,
        11,
        12,
        13,
        14,
        15,
        16,
        17,
        18,
        20,
        22,
        24,
        26,
        28,
        31,
        34,
        38,
        42,
        47,
        52,
        58,
        64,
        72,
        80,
        90,
        100,
    ]
)


def quantize_size(size: float) -> int:
    """The nearest of a fixed set of pixel sizes (keeps the per-process font cache small and warm)."""
    return int(_SIZES[np.argmin(np.abs(np.log(_SIZES / max(size, 1.0))))])


@functools.lru_cache(maxsize=4096)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, quantize_size(size))


@functools.lru_cache(maxsize=8)
def _coverage_table(folder: str) -> dict[str, str]:
    path = Path(folder) / COVERAGE_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


@functools.lru_cache(maxsize=1024)
def _coverage(path: str) -> frozenset[str]:
    """Vocabulary characters the font draws: from the folder's coverage file, else read with fontTools."""
    from vision.models.recognition.vocab import VOCAB
    from vision.training.synth.fonts import font_covers

    table = _coverage_table(str(Path(path).parent))
    return frozenset(table[Path(path).name] if Path(path).name in table else font_covers(path, VOCAB))


def carry_page_fonts(src: str | Path, dst: str | Path, *, per_family: int = 3) -> int:
    """Copy up to ``per_family`` styles of each font family in ``src`` to ``dst``, cut to the recognition
    vocabulary's glyphs (355 Debian fonts, 106 MB -> 175 fonts, 5.3 MB: small enough to carry), then
    :func:`write_coverage`. Regular faces first, then bold, italic, others. Returns the fonts written."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    from vision.models.recognition.vocab import VOCAB
    from vision.training.synth.fonts import discover_fonts

    def rank(f: FontInfo) -> tuple[int, int]:
        s = f.styles
        order = (
            0
            if not s & {"bold", "italic", "light", "condensed"}
            else 1
            if s == s - {"italic"} and "bold" in s
            else 2
            if "italic" in s and "bold" not in s
            else 3
        )
        return order, f.path.stat().st_size

    families: dict[str, list[FontInfo]] = {}
    for f in discover_fonts([src], include_system=False):
        families.setdefault(f.family, []).append(f)
    options = subset.Options()
    options.layout_features, options.hinting, options.name_IDs = ["kern", "liga"], False, ["*"]
    Path(dst).mkdir(parents=True, exist_ok=True)
    n = 0
    for fonts in families.values():
        for f in sorted(fonts, key=rank)[:per_family]:
            font = TTFont(str(f.path))
            sub = subset.Subsetter(options=options)
            sub.populate(text=VOCAB + " ")
            sub.subset(font)
            font.save(str(Path(dst) / f.name))
            n += 1
    write_coverage(dst)
    return n


def write_coverage(folder: str | Path) -> int:
    """Record every font's vocabulary coverage in ``folder/coverage.json`` (so training machines need no
    fontTools and workers start fast); returns the number of fonts."""
    from vision.models.recognition.vocab import VOCAB
    from vision.training.synth.fonts import discover_fonts, font_covers

    fonts = discover_fonts([folder], include_system=False, exclude_symbol=False)
    table = {f.name: font_covers(f.path, VOCAB) for f in fonts}
    (Path(folder) / COVERAGE_FILE).write_text(json.dumps(table, ensure_ascii=False))
    return len(table)


@dataclass
class _Canvas:
    """Drawing state of one page: the image, its draw handle and the words placed so far."""

    image: Image.Image
    draw: ImageDraw.ImageDraw
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size


class PageRenderer:
    """``renderer(rng, layout=None) -> SynthPage``: one random page (random layout unless given).

    Args:
        fonts: font files to draw with (symbol fonts excluded); style tags pick fonts per layout.
        words: ``rng -> str``, a text source (e.g. :class:`vision.training.synth.corpus.TextSampler`).
        lone_quantities: share of receipt item lines that start with a quantity standing alone ("1  Edamame"),
            a glyph narrow enough that detectors drop it; 0 (the default) draws none.
        dash_prices: share of receipt prices written as a whole amount and a dash standing alone
            ("500. —"), as catalogues and price lists print them; 0 (the default) draws none.
        separator_rows: share of receipt rules printed as a row of one repeated glyph ("*****", "-----",
            "=====") in the receipt's font, unlabelled: receipt ground truths (SROIE, WildReceipt) do not
            transcribe them; 0 (the default) draws every rule as a line.
        layouts: weights of the layouts drawn (missing ones keep :data:`LAYOUT_WEIGHTS`), e.g.
            ``{"receipt": 1.0}`` to draw receipts more often.
        letter_spacing: share of the layouts' single lines without lower-case letters (receipt rows, capital
            headings and letterheads; not running paragraphs) drawn letter-spaced, 0.1-0.45 em between
            characters and at most 0.6 of the font's space, as receipts and display type are printed; each
            such word stays one box. 0 (the default) draws none and leaves the random stream as it was.
    """

    def __init__(self, fonts: Sequence[FontInfo], words, *, lone_quantities: float = 0.0,
                 dash_prices: float = 0.0, separator_rows: float = 0.0,
                 layouts: dict[str, float] | None = None, letter_spacing: float = 0.0) -> None:
        self.fonts = [f for f in fonts if "symbol" not in f.styles]
        if not self.fonts:
            raise ValueError("no usable fonts")
        self.words, self.lone_quantities, self.dash_prices = words, lone_quantities, dash_prices
        self.separator_rows, self.letter_spacing = separator_rows, letter_spacing
        unknown = set(layouts or {}) - set(LAYOUTS)
        if unknown:
            raise ValueError(f"unknown layouts {sorted(unknown)}; expected some of {LAYOUTS}")
        weights = np.array([{**LAYOUT_WEIGHTS, **(layouts or {})}[k] for k in LAYOUTS], dtype=float)
        if (weights < 0).any() or weights.sum() <= 0:
            raise ValueError(f"layout weights must be non-negative with a positive sum, got {layouts}")
        self.layout_p = weights / weights.sum()
        self.mono = [f for f in self.fonts if "mono" in f.styles] or self.fonts
        self.plain = [f for f in self.fonts if not f.styles & {"handwriting", "light"}] or self.fonts

    # -- primitives ----------------------------------------------------------------------------------
    def _pick_font(self, rng: np.random.Generator, pool: Sequence[FontInfo] | None = None) -> FontInfo:
        pool = pool or (self.fonts if rng.random() < 0.3 else self.plain)
        return pool[int(rng.integers(len(pool)))]

    def word(self, rng: np.random.Generator, font: FontInfo, upper: bool = False) -> str:
        """A word the font can draw (falls back to letters of the alphabet)."""
        cover = _coverage(str(font.path))
        for _ in range(6):
            text = "".join(self.words(rng).split())
            text = text.upper() if upper else text
            if text and set(text) <= cover:
                return text
        return "".join(c for c in "ABCDEFGH"[: int(rng.integers(1, 8))] if c in cover) or "I"

    def text_run(
        self,
        c: _Canvas,
        x: float,
        baseline: float,
        words: Sequence[str],
        font: FontInfo,
        size: int,
        fill: tuple[int, int, int],
        space: float = 1.0,
        max_x: float | None = None,
        tracking: float = 0.0,
    ) -> float:
        """Draw words left to right from ``x`` on ``baseline``; returns the x after the last word drawn.

        ``tracking`` (px) is added after every character, spaces included (letter-spaced type); each word
        is then drawn glyph by glyph and still labelled as one box."""
        size = quantize_size(size)
        f = _font(str(font.path), size)
        gap = f.getlength(" ") * space + tracking
        for w in words:
            width = tracked_length(f, w, tracking)
            if max_x is not None and x + width > max_x:
                break
            if tracking:
                x0, y0, x1, y1 = draw_tracked(c.draw, x, baseline, w, f, fill, tracking)
            else:
                c.draw.text((x, baseline), w, font=f, fill=fill, anchor="ls")
                x0, y0, x1, y1 = c.draw.textbbox((x, baseline), w, font=f, anchor="ls")
            if x1 > x0 and y1 > y0:
                c.boxes.append((x0, min(y0, baseline - CAP * size), x1, max(y1, baseline + DESC * size)))
                c.texts.append(w)
            x += width + gap
        return x

    def paragraph(
        self,
        c: _Canvas,
        rng: np.random.Generator,
        x0: float,
        y: float,
        x1: float,
        y_max: float,
        font: FontInfo,
        size: int,
        fill: tuple[int, int, int],
        lines: int,
        justify: bool = False,
        upper: bool = False,
    ) -> float:
        """A block of up to ``lines`` lines between ``x0`` and ``x1``; returns the y below it."""
        size = quantize_size(size)
        f = _font(str(font.path), size)
        lead = size * rng.uniform(1.1, 1.6)
        space_w = f.getlength(" ")
        for i in range(lines):
            if y + lead > y_max:
                break
            baseline = y + size * 0.8
            line, width = [], 0.0
            target = (x1 - x0) * (rng.uniform(0.3, 0.9) if i == lines - 1 else 1.0)
            while True:
                w = self.word(rng, font, upper)
                wl = f.getlength(w)
                if width + wl > target:
                    break
                line.append(w)
                width += wl + space_w
            stretch = 1.0
            if justify and i < lines - 1 and len(line) > 1:
                stretch = max(1.0, (target - width + space_w * len(line)) / (space_w * (len(line) - 1)))
            self.text_run(c, x0, baseline, line, font, size, fill, space=min(stretch, 4.0))
            y += lead
        return y

    # -- clutter ------------------------------------------------------------------------------------
    @staticmethod
    def rule(
        c: _Canvas, rng: np.random.Generator, x0: float, y: float, x1: float, dashed: bool = False
    ) -> None:
        width = int(rng.integers(1, 3))
        if dashed:
            step = float(rng.integers(4, 12))
            for x in np.arange(x0, x1, step):
                c.draw.line([(x, y), (min(x + step / 2, x1), y)], fill=(0, 0, 0), width=width)
        else:
            c.draw.line([(x0, y), (x1, y)], fill=(0, 0, 0), width=width)

    @staticmethod
    def separator(c: _Canvas, rng: np.random.Generator, x0: float, baseline: float, x1: float, font: FontInfo,
                  size: int, fill: tuple[int, int, int]) -> None:
        """A row of one repeated glyph across ``[x0, x1]`` (a receipt's printed rule), unlabelled."""
        f = _font(str(font.path), quantize_size(size))
        glyph = SEPARATOR_GLYPHS[int(rng.integers(len(SEPARATOR_GLYPHS)))]
        n = int((x1 - x0) // max(f.getlength(glyph), 1.0))
        if n > 0:
            c.draw.text((x0, baseline), glyph * n, font=f, fill=fill, anchor="ls")

    @staticmethod
    def scribble(c: _Canvas, rng: np.random.Generator, x: float, y: float, w: float, h: float) -> None:
        """A signature-like stroke (unlabelled: signatures are not words)."""
        t = np.linspace(0, 1, 60)
        xs = x + t * w
        ys = y + h / 2 + np.sin(t * rng.uniform(8, 25)) * h / 2 * rng.uniform(0.4, 1.0)
        c.draw.line(list(zip(xs.tolist(), ys.tolist())), fill=(20, 20, 60), width=int(rng.integers(1, 4)))

    @staticmethod
    def barcode(c: _Canvas, rng: np.random.Generator, x: float, y: float, w: float, h: float) -> None:
        xx = int(x)
        while xx < x + w:
            bw = int(rng.integers(1, 4))
            c.draw.rectangle([xx, int(y), xx + bw - 1, int(y + h)], fill=(0, 0, 0))
            xx += bw + int(rng.integers(1, 4))

    @staticmethod
    def logo(c: _Canvas, rng: np.random.Generator, x: float, y: float, s: float) -> None:
        color = tuple(int(v) for v in rng.integers(0, 200, 3))
        if rng.random() < 0.5:
            c.draw.ellipse([x, y, x + s, y + s], outline=color, width=int(rng.integers(2, 6)))
        else:
            c.draw.polygon([(x, y + s), (x + s / 2, y), (x + s, y + s)], fill=color)

    def checkbox(self, c: _Canvas, rng: np.random.Generator, x: float, baseline: float, size: int) -> float:
        """A check box, labelled as a word (FUNSD's ground truth has check boxes as words: ``☐``/``☑``)."""
        s = size * 0.75
        c.draw.rectangle([x, baseline - s, x + s, baseline], outline=(0, 0, 0), width=max(1, size // 12))
        checked = rng.random() < 0.4
        if checked:
            c.draw.line([(x, baseline - s), (x + s, baseline)], fill=(0, 0, 0), width=max(1, size // 10))
            c.draw.line([(x + s, baseline - s), (x, baseline)], fill=(0, 0, 0), width=max(1, size // 10))
        c.boxes.append(
            (
                x,
                min(baseline - s, baseline - CAP * size),
                x + s + 1,
                max(baseline + 1, baseline + DESC * size),
            )
        )
        c.texts.append("\u2611" if checked else "\u2610")
        return x + s + size * 0.5

    # -- layouts --------------------------------------------------------------------------------------
    def __call__(self, rng: np.random.Generator, layout: str | None = None) -> SynthPage:
        from vision.training.synth import page_layouts

        layout = layout or str(rng.choice(LAYOUTS, p=self.layout_p))
        if layout not in LAYOUTS:
            raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")
        width, height = page_layouts.page_size(rng, layout)
        paper = tuple(int(v) for v in (255 - rng.integers(0, 12, 3) * (rng.random() < 0.3)))
        image = Image.new("RGB", (width, height), paper)
        canvas = _Canvas(image, ImageDraw.Draw(image))
        getattr(page_layouts, layout)(self, canvas, rng)
        boxes = np.asarray(canvas.boxes, dtype=np.float32).reshape(-1, 4)
        return SynthPage(np.asarray(image), boxes, canvas.texts, layout)
