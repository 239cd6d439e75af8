"""The show-through rule on synthetic pages: how much faint copied text it drops, and how little real text.

    python benchmarks/show_through.py [--pages 140] [--seed 0]

Renders synthetic document pages (:class:`vision.training.synth.pages.PageRenderer`, every layout in turn:
articles, letters, forms, receipts, tables, invoices, slides) and, for each, a second version with another
synthetic page blended in as show-through: its ink darkens the paper by a share ``alpha`` drawn from 0.06 to
0.35, mirrored half the time (the back of the sheet) and shifted. Both versions then get one of the page
generator's photometric degradations (clean, scan, fax, receipt, photo: blur, noise, JPEG, binarisation,
faded or low-contrast print; ``page_degrade.degrade_page``). The OCR reads each version as a document
(``photo="off"``, the rule off) and the rule is applied to its words afterwards; a word is *real* when at
least 30% of its box lies on a word of the page itself, *ghost* when not and 30% of it lies on a word of
the blended page. Half the pages (both versions alike) also get a band of faded print
(:func:`fade_band`), real text the rule must keep. For each rule setting the script reports the share of
ghost words dropped and of real words dropped, on the pages with and without show-through, and writes
``benchmarks/results/show_through.json``. Fonts and word lists: ``.carry/det/fonts`` and
``.carry/det/words`` (the detector's training assets, ``docs/models/detection.md``). Never evaluation data.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))

PROFILES = ("clean", "scan", "fax", "receipt", "photo")


def coverage(boxes: np.ndarray, words: np.ndarray) -> np.ndarray:
    """``float[N]``: the largest share of each box covered by one of ``words`` (both ``[., 4]`` xyxy)."""
    if not len(words) or not len(boxes):
        return np.zeros(len(boxes))
    ix = np.clip(np.minimum(boxes[:, None, 2], words[None, :, 2]) - np.maximum(boxes[:, None, 0], words[None, :, 0]), 0, None)
    iy = np.clip(np.minimum(boxes[:, None, 3], words[None, :, 3]) - np.maximum(boxes[:, None, 1], words[None, :, 1]), 0, None)
    area = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1e-9)
    return (ix * iy / area[:, None]).max(axis=1)


def ghost_page(page, other, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``page``'s image with ``other`` blended in as show-through, and ``other``'s word boxes on it."""
    h, w = page.image.shape[:2]
    img = cv2.resize(other.image, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    sx, sy = w / other.image.shape[1], h / other.image.shape[0]
    boxes = other.boxes.astype(np.float64) * [sx, sy, sx, sy]
    if rng.random() < 0.5:  # the back of the sheet: mirrored
        img = img[:, ::-1]
        boxes = np.stack([w - boxes[:, 2], boxes[:, 1], w - boxes[:, 0], boxes[:, 3]], axis=1)
    dx, dy = (int(v) for v in rng.integers(-40, 41, 2))
    img = np.roll(img, (dy, dx), axis=(0, 1))
    boxes = boxes + [dx, dy, dx, dy]
    alpha = float(rng.uniform(0.06, 0.35))
    darken = 1.0 - alpha * (1.0 - img.mean(axis=2, keepdims=True) / 255.0)
    return np.clip(page.image.astype(np.float32) * darken, 0, 255).astype(np.uint8), boxes


def fade_band(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``image`` with its ink lightened to 15-45% of its contrast in one horizontal band of 5-15% of the page
    height: faded print (a thermal receipt's worn end, a toner-starved strip), which is real text."""
    h = image.shape[0]
    band = int(h * rng.uniform(0.05, 0.15))
    top = int(rng.integers(0, max(1, h - band)))
    out = image.astype(np.float32)
    out[top:top + band] = 255.0 - (255.0 - out[top:top + band]) * float(rng.uniform(0.15, 0.45))
    return out.astype(np.uint8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=140)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from vision.pipelines.ocr.predictor import ocr_predictor
    from vision.pipelines.ocr.show_through import ShowThroughOptions, faint_by_contrast, word_contrast
    from vision.training.detection_data import PageWords
    from vision.training.synth.fonts import discover_fonts
    from vision.training.synth.page_degrade import degrade_page
    from vision.training.synth.pages import LAYOUTS, PageRenderer

    renderer = PageRenderer(discover_fonts([REPO / ".carry/det/fonts"]), PageWords(str(REPO / ".carry/det/words")))
    # the OCR as on documents (no photo gate), every word kept: the rule runs on its words afterwards
    ocr = ocr_predictor(device="cpu", photo="off", show_through=ShowThroughOptions(ratio=0.0))
    rng = np.random.default_rng(args.seed)
    pages = []  # (kind, grey, boxes px, label per box)
    start = time.perf_counter()
    for i in range(args.pages):
        page = renderer(rng, LAYOUTS[i % len(LAYOUTS)])
        other = renderer(rng, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        profile = PROFILES[int(rng.integers(len(PROFILES)))]
        ghosted, ghost_boxes = ghost_page(page, other, rng)
        if rng.random() < 0.5:  # faded print on both versions
            fade = np.random.default_rng([args.seed, i, 1])
            plain, ghosted = fade_band(page.image, fade), fade_band(ghosted, np.random.default_rng([args.seed, i, 1]))
        else:
            plain = page.image
        for kind, image in (("plain", plain), ("ghost", ghosted)):
            image = degrade_page(image, np.random.default_rng([args.seed, i]), profile)
            if image.ndim == 2:
                image = np.repeat(image[..., None], 3, axis=2)
            h, w = image.shape[:2]
            words = list(ocr([image]).pages[0].words)
            boxes = np.array([wd.geometry for wd in words], np.float64).reshape(-1, 4) * [w, h, w, h]
            conf = np.array([wd.confidence for wd in words])
            real = coverage(boxes, page.boxes.astype(np.float64)) >= 0.3
            ghost = ~real & (coverage(boxes, ghost_boxes) >= 0.3) if kind == "ghost" else np.zeros(len(boxes), bool)
            contrast = word_contrast(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), boxes)
            pages.append((kind, contrast, conf, real, ghost, profile))
    print(f"{len(pages)} pages rendered and detected in {time.perf_counter() - start:.0f} s", flush=True)
    rows = []
    grid = itertools.product((0.25, 0.3, 0.35, 0.4, 0.45), (0.0, 0.05, 0.1, 0.2), (1.0, 0.9, 0.8, 0.7, 0.5))
    for ratio, min_share, max_confidence in grid:
        min_contrast = 60.0
        opts = ShowThroughOptions(ratio=ratio, min_contrast=min_contrast, min_share=min_share,
                                  max_confidence=max_confidence)
        n = {"real_plain": 0, "real_ghost": 0, "ghost": 0}
        drop = dict.fromkeys(n, 0)
        by_profile: dict[str, list[int]] = {p: [0, 0] for p in PROFILES}
        for kind, contrast, conf, real, ghost, profile in pages:
            faint = faint_by_contrast(contrast, opts, conf)
            key = "real_plain" if kind == "plain" else "real_ghost"
            n[key] += int(real.sum())
            drop[key] += int((faint & real).sum())
            by_profile[profile][0] += int(real.sum())
            by_profile[profile][1] += int((faint & real).sum())
            n["ghost"] += int(ghost.sum())
            drop["ghost"] += int((faint & ghost).sum())
        row = {"ratio": ratio, "min_contrast": min_contrast, "min_share": min_share, "max_confidence": max_confidence, **{f"{k}_boxes": n[k] for k in n},
               **{f"{k}_dropped": round(drop[k] / max(n[k], 1), 4) for k in n},
               "real_dropped_by_profile": {p: round(d / max(t, 1), 4) for p, (t, d) in by_profile.items()}}
        rows.append(row)
        print(f"ratio {ratio:.2f} min_share {min_share:.2f} max_confidence {max_confidence:.1f}: ghost boxes dropped {row['ghost_dropped']:.1%} "
              f"of {n['ghost']}; real dropped {row['real_plain_dropped']:.2%} (plain pages, {n['real_plain']}), "
              f"{row['real_ghost_dropped']:.2%} (with show-through); by profile {row['real_dropped_by_profile']}",
              flush=True)
    out = REPO / "benchmarks/results/show_through.json"
    out.write_text(json.dumps({"pages": args.pages, "seed": args.seed, "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
