"""Block kinds on Chromium-drawn article pages: formulas, figures, captions, page headers and footers.

Pages come from :mod:`vision.training.synth.html_pages` (1, 2 and 3 CSS columns; display formulas,
figures with captions under them, running head and folio), each word with its box and its block's kind
from the DOM. The layout gets the true words (so recognition errors do not count), then the structure
stage runs (figures are found on the page image before the lines are grouped, as in the pipeline). Scores:

* word-level precision / recall of the kinds ``formula``, ``caption``, ``page_header`` + ``page_footer``
  (a word predicted as a kind counts as right when its true kind is that kind);
* figures: predicted ``Region(kind="figure")`` boxes matched one-to-one to the drawn figures at IoU >= 0.5
  (precision / recall), and the share of matched figures whose figure block is followed by its caption in
  the reading order.

    python benchmarks/structure_kinds.py --pages 10 --json out.json

``--ocr`` reads the page images with the shipped OCR pipeline instead: each OCR word takes the kind of the
drawn word it overlaps most (IoU >= 0.3) for precision; recall counts the drawn words of the kind whose
most overlapping OCR word lies in a block of that kind (the detector may join several drawn tokens).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.pipelines.ocr.reading_order import build_blocks, find_regions
from vision.pipelines.ocr.structure import StructureStage
from vision.structures import Page, Word
from vision.training.synth.html_pages import random_article, render_pages

KINDS = {"formula": {"formula"}, "caption": {"caption"}, "header/footer": {"page_header", "page_footer"}}


def _iou(a: tuple, b: tuple) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _ocr_truth(page: Page, drawn, w: int, h: int) -> dict:
    """True kind of each OCR word: that of the drawn word it overlaps most (IoU >= 0.3), else none."""
    true = [((b[0] / w, b[1] / h, b[2] / w, b[3] / h), k) for _, b, k in drawn.words]
    out = {}
    for wd in page.words:
        best = max(true, key=lambda t: _iou(wd.geometry, t[0]))
        out[id(wd)] = best[1] if _iou(wd.geometry, best[0]) >= 0.3 else "none"
    return out


def score_page(drawn, ocr=None) -> dict:
    h, w = drawn.image.shape[:2]
    if ocr is not None:  # the whole pipeline reads the page image
        page = ocr([drawn.image]).pages[0]
        truth = _ocr_truth(page, drawn, w, h)
        n_true = {name: sum(k in kinds for _, _, k in drawn.words) for name, kinds in KINDS.items()}
    else:
        words = [Word(t, 1.0, (b[0] / w, b[1] / h, b[2] / w, b[3] / h)) for t, b, _ in drawn.words]
        truth = {id(wd): k for wd, (_, _, k) in zip(words, drawn.words)}
        boxes = np.array([b for _, b, _ in drawn.words], dtype=np.float64)
        regions = find_regions(drawn.image, boxes / [w, h, w, h])  # as the layout stage does
        obstacles = np.array([r.geometry for r in regions], dtype=np.float64).reshape(-1, 4) * [w, h, w, h]
        page = Page(0, (h, w), build_blocks(words, boxes, obstacles=obstacles), regions=regions, image=drawn.image)
        page = StructureStage(layout_regions=True)([page])[0]
        n_true = {name: sum(k in kinds for k in truth.values()) for name, kinds in KINDS.items()}
    out: dict = {}
    kind_of = {id(wd): b.kind for b in page.blocks for ln in b.lines for wd in ln.words}
    for name, kinds in KINDS.items():
        pred = [truth[id(wd)] in kinds for b in page.blocks if b.kind in kinds for ln in b.lines for wd in ln.words]
        if ocr is None:
            out[name] = (sum(pred), len(pred), n_true[name], sum(pred))
            continue
        found = 0  # drawn words of the kind whose most overlapping OCR word is in a block of the kind
        for _, bx, k in drawn.words:
            if k in kinds and page.words:
                box = (bx[0] / w, bx[1] / h, bx[2] / w, bx[3] / h)
                best = max(page.words, key=lambda wd: _iou(wd.geometry, box))
                found += _iou(best.geometry, box) > 0 and kind_of[id(best)] in kinds
        out[name] = (sum(pred), len(pred), n_true[name], found)
    found = [r.geometry for r in page.regions if r.kind == "figure"]
    true = [(x0 / w, y0 / h, x1 / w, y1 / h) for x0, y0, x1, y1 in drawn.figures]
    pairs = sorted(((_iou(f, t), i, j) for i, f in enumerate(found) for j, t in enumerate(true)), reverse=True)
    used_f, used_t, matched = set(), set(), []
    for iou, i, j in pairs:
        if iou >= 0.5 and i not in used_f and j not in used_t:
            used_f.add(i), used_t.add(j), matched.append(found[i])
    linked = 0
    for k, b in enumerate(page.blocks):
        if b.kind == "figure" and b.geometry in matched and k + 1 < len(page.blocks):
            nxt = page.blocks[k + 1]
            linked += nxt.kind == "caption" or (nxt.lines and nxt.lines[0].words and nxt.lines[0].words[0].value == "Figure")
    out["figures"] = (len(matched), len(found), len(true), linked)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10, help="pages per column count (1, 2, 3)")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--ocr", action="store_true", help="read the page images with the shipped OCR pipeline")
    args = parser.parse_args()
    ocr = None
    if args.ocr:
        import vision

        ocr = vision.ocr_predictor()
    totals: dict = {}
    for cols in (1, 2, 3):
        rng = np.random.default_rng(args.seed + cols)
        for drawn in render_pages([random_article(rng, cols) for _ in range(args.pages)], [cols] * args.pages):
            for name, vals in score_page(drawn, ocr).items():
                totals[name] = tuple(a + b for a, b in zip(totals.get(name, (0,) * len(vals)), vals))
    report = {}
    for name, vals in totals.items():
        if name == "figures":
            m, f, t, linked = vals
            report[name] = {"precision": round(m / max(f, 1), 4), "recall": round(m / max(t, 1), 4), "found": f,
                            "true": t, "caption_follows": round(linked / max(m, 1), 4)}
        else:
            right, pred, true, found = vals
            report[name] = {"precision": round(right / max(pred, 1), 4), "recall": round(found / max(true, 1), 4),
                            "predicted_words": pred, "true_words": true}
        print(name, report[name])
    if args.json:
        args.json.write_text(json.dumps({"pages_per_column_count": args.pages, **report}, indent=1))


if __name__ == "__main__":
    main()
