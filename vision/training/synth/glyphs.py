"""Fast text rasterisation for synthetic data: glyph bitmaps cached per (font, size), composed with numpy.

Pillow re-rasterises every glyph on every ``draw.text`` call (about 50 us a glyph, 150+ us fixed cost a
call, measured here), which made it the bottleneck of the word generator. Word crops only need
left-to-right Latin text, so we rasterise each glyph once and place it by its advance width. Kerning pairs
and ligatures are dropped, an acceptable loss for OCR training data (typewriter and receipt fonts have
neither).

A cold glyph still costs about 200 us (several FreeType loads behind Pillow's public calls), and with
hundreds of fonts x 10 sizes x 100+ characters every DataLoader worker would spend its first minutes
rendering the same glyphs as its 14 siblings. :meth:`GlyphCache.prewarm` renders the common glyphs once,
in a process pool, into compact :class:`PackedFace` atlases (three arrays per font and size) that forked
workers share copy-on-write and that pickle cheaply for spawned ones. Rare glyphs are still rendered lazily.
"""

from __future__ import annotations

import multiprocessing
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["Glyph", "GlyphCache", "PackedFace", "TextMask", "pack_face", "render_glyph"]

_EMPTY = np.zeros((0, 0), np.uint8)
_EMPTY.flags.writeable = False


@dataclass(frozen=True, slots=True)
class Glyph:
    """A glyph's coverage bitmap (uint8, 255 = ink), its offset from the pen position and its advance."""

    mask: np.ndarray
    dx: int  # left of the bitmap relative to the pen x
    dy: int  # top of the bitmap relative to the baseline (negative: above it)
    advance: float


@dataclass(frozen=True)
class TextMask:
    """Rendered text: ``mask`` (uint8 coverage), baseline row, and per-character ink boxes in mask pixels."""

    mask: np.ndarray
    baseline: int
    boxes: np.ndarray  # [len(text), 4] x0, y0, x1, y1 (empty glyphs such as spaces have x0 == x1)
    ink: tuple[float, float, float, float] | None = None  # ink_box, when the maker computed it already

    @property
    def ink_box(self) -> tuple[float, float, float, float]:
        """Union of the non-empty character boxes (the whole mask if there are none)."""
        if self.ink is not None:
            return self.ink
        b = self.boxes[self.boxes[:, 2] > self.boxes[:, 0]]
        if not len(b):
            return 0.0, 0.0, float(self.mask.shape[1]), float(self.mask.shape[0])
        return float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()), float(b[:, 3].max())


def load_font(path: str, size: int) -> ImageFont.FreeTypeFont:
    """The font at ``size`` px with Pillow's basic layout (no shaping: one glyph per character)."""
    return ImageFont.truetype(path, size, layout_engine=ImageFont.Layout.BASIC)


def render_glyph(font: ImageFont.FreeTypeFont, ch: str) -> Glyph:
    """Rasterise one character (its bitmap box as Pillow's ``getbbox`` gives it, baseline anchored)."""
    x0, y0, x1, y1 = font.getbbox(ch, anchor="ls")
    w, h = max(x1 - x0, 0), max(y1 - y0, 0)
    if w and h:
        img = Image.new("L", (w, h), 0)
        ImageDraw.Draw(img).text((-x0, -y0), ch, font=font, fill=255, anchor="ls")
        mask = np.asarray(img)
    else:
        mask = _EMPTY
    return Glyph(mask, int(x0), int(y0), float(font.getlength(ch)))


@dataclass(frozen=True)
class PackedFace:
    """The glyphs of one (font, size) in a few arrays: cheap to pickle, shared by forked processes.

    ``table`` is ``[n, 4]`` int32 rows ``dx, dy, w, h`` for ``chars[i]``; ``pixels`` holds the masks
    concatenated row-major in the same order; ``advances`` is ``[n]`` float64.
    """

    path: str
    size: int
    metrics: tuple[int, int]  # ascent, descent
    chars: str
    table: np.ndarray
    advances: np.ndarray
    pixels: np.ndarray

    def glyphs(self) -> dict[str, Glyph]:
        """The glyphs, their masks read-only views into :attr:`pixels` (no copies)."""
        out, start = {}, 0
        for ch, (dx, dy, w, h), adv in zip(self.chars, self.table.tolist(), self.advances.tolist()):
            mask = self.pixels[start:start + w * h].reshape(h, w) if w and h else _EMPTY
            out[ch] = Glyph(mask, dx, dy, adv)
            start += w * h
        return out

    @classmethod
    def from_glyphs(cls, path: str, size: int, metrics: tuple[int, int], glyphs: dict[str, Glyph]) -> PackedFace:
        """Pack rendered glyphs (the inverse of :meth:`glyphs`)."""
        chars = "".join(glyphs)
        table = np.array([(g.dx, g.dy, g.mask.shape[1], g.mask.shape[0]) for g in glyphs.values()],
                         np.int32).reshape(-1, 4)
        pixels = np.concatenate([g.mask.ravel() for g in glyphs.values()] + [np.zeros(0, np.uint8)])
        pixels.flags.writeable = False
        advances = np.array([g.advance for g in glyphs.values()], np.float64)
        return cls(path, size, (int(metrics[0]), int(metrics[1])), chars, table, advances, pixels)


def pack_face(path: str, size: int, chars: str) -> PackedFace:
    """Render ``chars`` of the font at ``path`` and ``size`` px into a :class:`PackedFace`."""
    font = load_font(path, size)
    glyphs = {ch: render_glyph(font, ch) for ch in dict.fromkeys(chars)}
    return PackedFace.from_glyphs(path, size, font.getmetrics(), glyphs)


def _pack_font(path: str, sizes: Sequence[int], chars: str) -> list[PackedFace]:
    return [pack_face(path, size, chars) for size in sizes]


class _Face:
    """Cached glyphs of one (font, size); the FreeType font is opened only on a miss."""

    __slots__ = ("glyphs", "metrics", "path", "size", "_font")

    def __init__(self, path: str, size: int, glyphs: dict[str, Glyph] | None = None,
                 metrics: tuple[int, int] | None = None) -> None:
        self.path, self.size, self._font = path, size, None
        self.glyphs = glyphs if glyphs is not None else {}
        self.metrics = metrics if metrics is not None else self.font.getmetrics()

    @property
    def font(self) -> ImageFont.FreeTypeFont:
        if self._font is None:
            self._font = load_font(self.path, self.size)
        return self._font


class GlyphCache:
    """Per-process cache of glyph bitmaps; ``render(path, size, text)`` -> :class:`TextMask`.

    Bounded: past ``max_glyphs`` the least recently used (font, size) faces are dropped (the default bound is
    above the ~860k glyphs of 322 fonts x 10 sizes x our 268-character vocabulary; a prewarm caches ~380k).
    Pickling keeps the glyphs (packed), so a spawned DataLoader worker starts as warm as its parent.
    """

    def __init__(self, max_glyphs: int = 1_000_000) -> None:
        self.max_glyphs = max_glyphs
        self._faces: OrderedDict[tuple[str, int], _Face] = OrderedDict()
        self._count = 0

    def __len__(self) -> int:
        """Number of cached glyphs."""
        return self._count

    def __getstate__(self) -> dict:
        faces = [PackedFace.from_glyphs(f.path, f.size, f.metrics, f.glyphs) for f in self._faces.values()]
        return {"max_glyphs": self.max_glyphs, "faces": faces}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["max_glyphs"])
        for face in state["faces"]:
            self.add(face)

    def _face(self, path: str, size: int) -> _Face:
        key = (path, size)
        face = self._faces.get(key)
        if face is None:
            face = self._faces[key] = _Face(path, size)
        else:
            self._faces.move_to_end(key)
        return face

    def _evict(self) -> None:
        """Drop least recently used faces (never the newest) until at most ``max_glyphs`` glyphs remain."""
        while self._count > self.max_glyphs and len(self._faces) > 1:
            _, old = self._faces.popitem(last=False)
            self._count -= len(old.glyphs)

    def _miss(self, face: _Face, ch: str) -> Glyph:
        """Render a glyph not cached yet (``face`` must be the most recently used one)."""
        g = face.glyphs[ch] = render_glyph(face.font, ch)
        self._count += 1
        self._evict()
        return g

    def add(self, packed: PackedFace) -> None:
        """Adopt pre-rendered glyphs (those already cached for that face are kept)."""
        key = (packed.path, packed.size)
        face = self._faces.get(key)
        if face is None:
            face = self._faces[key] = _Face(packed.path, packed.size, packed.glyphs(), packed.metrics)
            self._count += len(face.glyphs)
        else:
            self._faces.move_to_end(key)
            self._count -= len(face.glyphs)
            face.glyphs = {**packed.glyphs(), **face.glyphs}
            self._count += len(face.glyphs)
        self._evict()

    def prewarm(self, fonts: Sequence[tuple[str, str]], sizes: Sequence[int], processes: int = 1) -> int:
        """Render ``(path, chars)`` for every size in ``sizes``, in ``processes`` worker processes.

        Done once before DataLoader workers start, so they all begin warm instead of each re-rendering the
        same glyphs. Returns the number of glyphs cached. Bitmaps are identical to lazily rendered ones.
        """
        sizes = list(sizes)
        if processes <= 1 or len(fonts) <= 1:
            results = [_pack_font(path, sizes, chars) for path, chars in fonts]
        else:
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            with ProcessPoolExecutor(min(processes, len(fonts)), mp_context=ctx) as pool:
                futures = [pool.submit(_pack_font, path, sizes, chars) for path, chars in fonts]
                results = [f.result() for f in futures]
        for packed in results:
            for face in packed:
                self.add(face)
        return len(self)

    def font(self, path: str, size: int) -> ImageFont.FreeTypeFont:
        """The Pillow font object of ``path`` at ``size`` px."""
        return self._face(path, size).font

    def glyph(self, path: str, size: int, ch: str) -> Glyph:
        """One glyph, rendered on first use."""
        face = self._face(path, size)
        return face.glyphs.get(ch) or self._miss(face, ch)

    def metrics(self, path: str, size: int) -> tuple[int, int]:
        """Font ascent and descent in pixels."""
        return self._face(path, size).metrics

    def length(self, path: str, size: int, text: str, spacing: float = 0.0) -> float:
        """Advance width of ``text`` (plus ``spacing`` after every character)."""
        return sum(self.glyph(path, size, c).advance + spacing for c in text)

    def render(self, path: str, size: int, text: str, spacing: float = 0.0) -> TextMask:
        """Compose ``text`` on one baseline; ``spacing`` adds pixels between characters."""
        face = self._face(path, size)
        get = face.glyphs.get
        glyphs = [get(c) or self._miss(face, c) for c in text]
        ascent, descent = face.metrics
        xs, pen = [], 0.0
        for g in glyphs:
            xs.append(int(pen) + g.dx)
            pen += g.advance + spacing
        shapes = [g.mask.shape for g in glyphs]
        left = min(0, *xs) if xs else 0
        top = min(-ascent, *(g.dy for g in glyphs)) if glyphs else -ascent
        right = max(int(pen) + 1, *(x + s[1] for x, s in zip(xs, shapes))) if xs else int(pen) + 1
        bottom = max(descent, *(g.dy + s[0] for g, s in zip(glyphs, shapes))) if glyphs else descent
        mask = np.zeros((bottom - top, right - left), np.uint8)
        boxes, inked = [], []
        for x, g, (h, w) in zip(xs, glyphs, shapes):
            x, y = x - left, g.dy - top
            if w and h:
                region = mask[y:y + h, x:x + w]
                np.maximum(region, g.mask, out=region)
                inked.append((x, y, x + w, y + h))
            boxes.append((x, y, x + w, y + h))
        ink = (float(min(b[0] for b in inked)), float(min(b[1] for b in inked)), float(max(b[2] for b in inked)),
               float(max(b[3] for b in inked))) if inked else (0.0, 0.0, float(mask.shape[1]), float(mask.shape[0]))
        return TextMask(mask, -top, np.array(boxes, np.float32).reshape(-1, 4), ink)
