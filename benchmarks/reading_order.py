"""Reading order on born-digital multi-column PDFs: page CER in the *true* reading order.

The truth is each page's text layer in content-stream order (TeX writes a page's running head, then its
columns one after the other, then its foot), words joined by single spaces. The layout under test gets the
same words with their boxes (pixels at 150 dpi) and arranges them (:func:`vision.pipelines.ocr.reading_order.
build_blocks`); its text is the words in the order it returns. Both sides hold the same words, so the CER
(Levenshtein distance / truth length) measures order alone. A second part scores drawn 2- and 3-column
pages (:mod:`vision.training.synth.structured_page`, 5 mm gutters).

To compare with another version of the layout, run this script with ``PYTHONPATH`` pointing at that
version's source (it uses only ``build_blocks``, ``LayoutOptions`` and ``text_layer_words``)::

    python benchmarks/reading_order.py --pdf /path/elstest-5p.pdf ... --json out.json

``--html N`` adds N article pages per column count (2 and 3) drawn by headless Chromium from generated
HTML (:mod:`vision.training.synth.html_pages`: CSS columns, 3-8 mm gutters, headings, lists, display
formulas, figures with captions, running head and folio), the truth being the DOM's order; the figures
found on each page image (as the layout stage finds them) are passed to the layout as obstacles.

PDFs used in docs/benchmarks.md: two-column templates of Debian's ``texlive-publishers-doc``
(``apt-get download texlive-publishers-doc``; ``dpkg-deb -x``): elsarticle/elstest-5p.pdf,
acmconf/acmconf.pdf, aiaa/template_basic.pdf, asmeconf/asmeconf-template.pdf,
asmejour/asmejour-template.pdf, acmart/samples/sample-sigplan.pdf.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
from rapidfuzz.distance import Levenshtein

try:
    from vision.pipelines.ocr.reading_order import build_blocks
except ImportError:  # the layout before the pipelines/ocr package
    from vision.pipelines.layout import build_blocks  # type: ignore[no-redef]
from vision.structures import Word

DPI = 150


def _order_text(words: list[tuple[str, tuple[float, float, float, float]]], size: tuple[int, int],
                obstacles: np.ndarray | None = None) -> str:
    h, w = size
    objs = [Word(t, 1.0, b) for t, b in words]
    boxes = np.array([b for _, b in words], dtype=np.float64).reshape(-1, 4) * [w, h, w, h]
    blocks = build_blocks(objs, boxes, obstacles=obstacles) if obstacles is not None else build_blocks(objs, boxes)
    return " ".join(wd.value for b in blocks for ln in b.lines for wd in ln.words)


def pdf_pages(paths: list[Path], max_pages: int) -> list[dict]:
    """``{"name", "size", "words"}`` per page: text-layer words in content order, relative boxes."""
    import pypdfium2 as pdfium

    from vision.io.pdf_text import text_layer_words

    pages = []
    for path in paths:
        doc = pdfium.PdfDocument(str(path))
        for i in range(min(len(doc), max_pages)):
            page = doc[i]
            wpt, hpt = page.get_size()
            words = [(w.value, tuple(w.geometry)) for w in text_layer_words(page)]
            if len(words) > 50:
                pages.append({"name": f"{path.name}:{i + 1}", "size": (round(hpt * DPI / 72), round(wpt * DPI / 72)), "words": words})
        doc.close()
    return pages


def drawn_pages(columns: int, count: int) -> list[dict]:
    """Pages drawn with ``columns`` columns and 5 mm gutters, a title, headings, a running head and foot."""
    from vision.training.synth.structured_page import LOREM, Element, render_structured_page

    pages = []
    for seed in range(count):
        rng = np.random.default_rng(seed)
        els = [Element("title", "Notes on " + " ".join(rng.choice(LOREM, 3)), span=True)]
        for k in range(int(rng.integers(3, 7)) * columns):
            els.append(Element("heading", f"{k + 1} " + " ".join(rng.choice(LOREM, 2))))
            els.append(Element("paragraph", " ".join(rng.choice(LOREM, int(rng.integers(20, 90))))))
        page = render_structured_page(els, columns=columns, header="Journal of Examples", footer=f"page {seed + 1}")
        rel = page.relative_boxes()
        words = [(t, tuple(b)) for (t, _, _), b in zip(page.words, rel)]
        pages.append({"name": f"drawn-{columns}col-{seed}", "size": page.image.shape[:2], "words": words})
    return pages


def html_pages(columns: int, count: int, seed: int = 0) -> list[dict]:
    """Article pages drawn by headless Chromium with ``columns`` CSS columns (gutters 3-8 mm), the DOM's
    word boxes and order (:mod:`vision.training.synth.html_pages`)."""
    from vision.pipelines.ocr.regions import find_regions
    from vision.training.synth.html_pages import random_article, render_pages

    rng = np.random.default_rng(seed + columns)
    drawn = render_pages([random_article(rng, columns) for _ in range(count)], [columns] * count)
    pages = []
    for k, page in enumerate(drawn):
        h, w = page.image.shape[:2]
        words = [(t, (b[0] / w, b[1] / h, b[2] / w, b[3] / h)) for t, b, _ in page.words]
        # figures as the layout stage finds them on the image (LayoutOptions.regions): they hold their column
        regions = find_regions(page.image, np.array([b for _, b in words], dtype=np.float64).reshape(-1, 4))
        obstacles = np.array([r.geometry for r in regions], dtype=np.float64).reshape(-1, 4) * [w, h, w, h]
        pages.append({"name": f"html-{columns}col-{seed}-{k}", "size": (h, w), "words": words, "obstacles": obstacles})
    return pages


def score(pages: list[dict]) -> dict:
    """Micro-averaged CER (order only) and seconds of layout over ``pages``."""
    dist = length = 0
    seconds = 0.0
    per_page = []
    for p in pages:
        truth = " ".join(t for t, _ in p["words"])
        t0 = time.perf_counter()
        pred = _order_text(p["words"], p["size"], p.get("obstacles"))
        seconds += time.perf_counter() - t0
        d = Levenshtein.distance(pred, truth)
        dist, length = dist + d, length + len(truth)
        per_page.append({"page": p["name"], "cer": round(d / len(truth), 4)})
    return {"pages": len(pages), "cer": round(dist / length, 4) if length else None,
            "layout_s_per_page": round(seconds / max(len(pages), 1), 4), "per_page": per_page}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, nargs="*", default=[], help="born-digital multi-column PDFs")
    parser.add_argument("--max-pages", type=int, default=4, help="pages per PDF (first N)")
    parser.add_argument("--drawn", type=int, default=10, help="drawn pages per column count (2 and 3)")
    parser.add_argument("--html", type=int, default=0, help="Chromium-drawn article pages per column count (2 and 3)")
    parser.add_argument("--json", type=Path, default=None, help="write the report here")
    args = parser.parse_args()
    import vision

    report = {"machine": platform.node() + " " + platform.processor(), "vision": str(Path(vision.__file__).parent)}
    if args.pdf:
        report["pdf"] = score(pdf_pages(args.pdf, args.max_pages))
    for cols in (2, 3) if args.drawn else ():
        report[f"drawn_{cols}col"] = score(drawn_pages(cols, args.drawn))
    for cols in (2, 3) if args.html else ():
        report[f"html_{cols}col"] = score(html_pages(cols, args.html))
    print(f"{'set':<14} {'pages':>5} {'CER':>7} {'layout s/page':>14}")
    for key, r in report.items():
        if isinstance(r, dict):
            print(f"{key:<14} {r['pages']:>5} {r['cer']:>7} {r['layout_s_per_page']:>14}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
