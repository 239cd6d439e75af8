"""Real page layouts with exact word boxes, from born-digital PDFs (pypdfium2 text layers).

A curated page set is made once (:func:`build_page_set`): pages whose text layer agrees with their rendered
ink are rendered to small gray PNGs, their word boxes (pixels) into one JSON file; training workers read
them with :class:`RenderedPages` (no pypdfium2 needed where training runs).

Word box convention (shared with :mod:`vision.training.synth.pages`): horizontally the ink of the word's
glyphs; vertically from the cap line to the descender line of its font (``baseline - 0.70 * size`` to
``baseline + 0.21 * size``), widened to the glyph ink when a glyph reaches beyond. Words of one size on one
line therefore share their top and bottom, like hand-labelled word boxes.
"""

from __future__ import annotations

import ctypes
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

__all__ = [
    "CAP",
    "DESC",
    "PdfWord",
    "extract_words",
    "render_page",
    "ink_check",
    "build_page_set",
    "WORDS_FILE",
    "RenderedPages",
]

WORDS_FILE = "words.json.gz"
CAP, DESC = 0.70, 0.21  # cap height and descender depth in em: typical of Latin text faces (Times 0.66/0.22,
# Helvetica 0.72/0.21, Computer Modern 0.68/0.19)


@dataclass(frozen=True)
class PdfWord:
    """A word of a PDF text layer: ``box`` in points from the top-left, ``straight`` False if rotated."""

    text: str
    box: tuple[float, float, float, float]
    straight: bool


def _flush(chars: list[tuple], page_h: float, out: list[PdfWord]) -> None:
    if not chars:
        return
    text = "".join(c[0] for c in chars)
    x0 = min(c[1] for c in chars)
    x1 = max(c[3] for c in chars)
    ink_top = page_h - max(c[4] for c in chars)
    ink_bot = page_h - min(c[2] for c in chars)
    size = max(c[6] for c in chars)
    base = page_h - float(np.median([c[5] for c in chars]))
    straight = all(abs(c[7]) < 1e-3 for c in chars)
    y0, y1 = min(ink_top, base - CAP * size), max(ink_bot, base + DESC * size)
    out.append(PdfWord(text, (x0, y0, x1, y1), straight))
    chars.clear()


def extract_words(page) -> list[PdfWord]:  # page: pypdfium2.PdfPage
    """Words of a page's text layer, split at whitespace, line changes and gaps wider than 0.25 em."""
    import pypdfium2.raw as raw

    textpage = page.get_textpage()
    page_h = page.get_height()
    words: list[PdfWord] = []
    chars: list[tuple] = []
    ox, oy = ctypes.c_double(), ctypes.c_double()
    for i in range(textpage.count_chars()):
        ch = textpage.get_text_range(i, 1)
        if not ch or ch.isspace() or raw.FPDFText_IsGenerated(textpage.raw, i) == 1:
            _flush(chars, page_h, words)
            continue
        left, bottom, right, top = textpage.get_charbox(i)
        raw.FPDFText_GetCharOrigin(textpage.raw, i, ox, oy)
        size = raw.FPDFText_GetFontSize(textpage.raw, i)
        angle = raw.FPDFText_GetCharAngle(textpage.raw, i)
        if chars:
            prev = chars[-1]
            if (
                abs(oy.value - prev[5]) > 0.3 * size
                or left < prev[1] - 0.1 * size
                or left - prev[3] > 0.25 * max(size, prev[6])
            ):
                _flush(chars, page_h, words)
        chars.append((ch, left, bottom, right, top, oy.value, size, angle))
    _flush(chars, page_h, words)
    textpage.close()
    return [w for w in words if w.box[2] > w.box[0] and w.box[3] > w.box[1]]


def render_page(page, scale: float) -> np.ndarray:
    """Render a pypdfium2 page to ``uint8[H, W, 3]`` RGB at ``scale`` pixels per point (72 dpi = 1)."""
    bitmap = page.render(scale=scale, rev_byteorder=True, fill_color=(255, 255, 255, 255))
    return np.ascontiguousarray(bitmap.to_numpy()[:, :, :3])


def ink_check(image: np.ndarray, boxes: np.ndarray) -> tuple[float, int]:
    """How far a text layer disagrees with the rendered ink.

    Args:
        image: ``uint8[H, W, 3]`` page; boxes: ``float[N, 4]`` word boxes in its pixels.

    Returns:
        ``(fraction of words with almost no ink, number of text-sized ink blobs outside all words)``:
        the first catches invisible or clipped text layers, the second text drawn as paths or images.
    """
    import cv2

    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    ink = (gray < 128).astype(np.uint8)
    covered = np.zeros_like(ink)
    empty = 0
    for x0, y0, x1, y1 in np.round(boxes).astype(int):
        patch = ink[max(y0, 0) : y1 + 1, max(x0, 0) : x1 + 1]
        if patch.size == 0 or patch.mean() < 0.02:
            empty += 1
        covered[max(y0 - 2, 0) : y1 + 3, max(x0 - 2, 0) : x1 + 3] = 1
    stray = ink * (1 - covered)
    n, _, stats, _ = cv2.connectedComponentsWithStats(stray, connectivity=8)
    heights = np.asarray([b[3] - b[1] for b in boxes]) if len(boxes) else np.asarray([10.0])
    med = float(np.median(heights))
    w, h = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]
    textlike = (h >= 0.3 * med) & (h <= 1.5 * med) & (w <= 2 * med) & (stats[1:, cv2.CC_STAT_AREA] >= 4)
    return empty / max(len(boxes), 1), int(textlike.sum())


def build_page_set(
    pdf_paths: Sequence[Path],
    out_dir: Path,
    *,
    max_pages: int,
    per_file: int = 1,
    min_words: int = 40,
    seed: int = 0,
    scale: float = 1.6,
    levels: int = 4,
) -> int:
    """Render pages whose text layer matches their ink to ``out_dir/pages/*.png``, words to ``WORDS_FILE``.

    Files are visited in a seeded random order, trying a few random pages each and keeping at most
    ``per_file``, until ``max_pages`` are kept. A page is kept when all its words are straight, it has
    ``min_words`` of them, under 2% lack ink and fewer than 10 text-like blobs lie outside words (see
    :func:`ink_check`). Pages are stored with ``levels`` grey levels (4 levels: about 27 kB a page at scale
    1.6, ~115 dpi; small enough to carry several hundred to the GPU machine). Returns the pages kept.
    """
    import pypdfium2 as pdfium
    from PIL import Image

    rng = np.random.default_rng(seed)
    (out_dir / "pages").mkdir(parents=True, exist_ok=True)
    records: list[dict] = []
    for path in (pdf_paths[i] for i in rng.permutation(len(pdf_paths))):
        if len(records) >= max_pages:
            break
        try:
            doc = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError:
            continue
        kept = 0
        for index in rng.permutation(len(doc))[: per_file * 3]:
            if kept >= per_file or len(records) >= max_pages:
                break
            page = doc[int(index)]
            words = extract_words(page)
            if len(words) < min_words or not all(w.straight for w in words):
                continue
            image = render_page(page, scale)
            boxes = np.asarray([w.box for w in words]) * scale
            empty, stray = ink_check(image, boxes)
            if empty > 0.02 or stray >= 10:
                continue
            name = f"{len(records):05d}.png"
            Image.fromarray(image).convert("L").quantize(levels).save(out_dir / "pages" / name, optimize=True)
            records.append(
                {
                    "image": f"pages/{name}",
                    "source": f"{path.parent.name}/{path.name}",
                    "page": int(index),
                    "words": [[w.text, *(round(float(v), 1) for v in b)] for w, b in zip(words, boxes)],
                }
            )
            kept += 1
        doc.close()
    with gzip.open(out_dir / WORDS_FILE, "wt", encoding="utf-8") as f:
        json.dump(records, f)
    return len(records)


class RenderedPages:
    """A page set written by :func:`build_page_set`.

    ``page(i) -> (uint8[H, W, 3], float32[N, 4] boxes in pixels, texts)``.
    """

    def __init__(self, root: Path, indices: Iterable[int] | None = None) -> None:
        self.root = Path(root)
        with gzip.open(self.root / WORDS_FILE, "rt", encoding="utf-8") as f:
            self.records = json.load(f)
        self.indices = list(indices) if indices is not None else list(range(len(self.records)))

    def __len__(self) -> int:
        return len(self.indices)

    def page(self, i: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
        from PIL import Image

        rec = self.records[self.indices[i]]
        with Image.open(self.root / rec["image"]) as im:
            image = np.asarray(im.convert("RGB"))
        boxes = np.asarray([w[1:] for w in rec["words"]], dtype=np.float32).reshape(-1, 4)
        return image, boxes, [w[0] for w in rec["words"]]
