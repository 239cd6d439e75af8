"""How well word geometry fits words set along arcs: outlines against boxes and rotated quads.

    python benchmarks/curved_outlines.py [--words 200] [--seed 7] [--out FILE]

Draws ``--words`` pages, each one word from the bundled English lexicon (5-12 letters) in DejaVu Sans,
Serif or Mono at 32-56 px, its letters set upright along an arc of a circle (radius 90-300 px, larger where
the word would span more than 150 degrees; the lower or upper half, so the baseline smiles or frowns; a 90-degree turn of the whole page in a quarter of them), on a
white 800 x 600 page. The truth is each letter's rotated glyph cell (the polygon the letter was pasted in,
cut to its ink's extent along the arc), their union rasterised. The shipped default detector reads each page
on the CPU (``detection_predictor(outlines=True)`` for outlines and boxes; ``assume_straight_pages=False``
for rotated quads); the region that overlaps the truth most is scored by IoU with it, the other regions are
counted. Reports mean IoU of outlines, boxes and quads, on how many words the outline fits better than each,
how many words come back as one region, and the outline's points. With ``--read``, the whole OCR
(``ocr_predictor(device="cpu", photo="off")``) reads each page without and with ``outlines=True`` (whose
``curved`` stage reads words on arcs again unbent, :mod:`vision.pipelines.ocr.curved`): words read exactly
(case-insensitive) either way. Synthetic only; no evaluation set.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))

FONTS = [f"/usr/share/fonts/truetype/dejavu/{name}.ttf" for name in ("DejaVuSans", "DejaVuSerif", "DejaVuSansMono")]
SIZE = (600, 800)  # (height, width)


def arc_page(word: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(page uint8[H, W, 3], truth bool[H, W])`` for ``word`` set along an arc (see the module docstring)."""
    from PIL import Image, ImageDraw, ImageFont

    h, w = SIZE
    size = int(rng.integers(32, 57))
    font = ImageFont.truetype(FONTS[int(rng.integers(len(FONTS)))], size)
    smile = bool(rng.random() < 0.5)
    widths = [font.getlength(ch) for ch in word]
    radius = max(float(rng.uniform(90, 300)), sum(widths) / 2.6)  # the word spans at most 150 degrees
    span = sum(widths) / radius  # radians the word covers on its circle
    centre = np.array([w / 2, 0.65 * h - radius if smile else 0.35 * h + radius])
    start = (np.pi / 2 if smile else 3 * np.pi / 2) + (span / 2 if smile else -span / 2)
    page = Image.new("L", (w, h), 255)
    truth = np.zeros((h, w), np.uint8)
    along = 0.0
    for ch, cw in zip(word, widths):
        theta = start + (-(along + cw / 2) if smile else along + cw / 2) / radius
        along += cw
        cell = int(size * 1.6)
        glyph = Image.new("L", (cell, cell), 0)
        ImageDraw.Draw(glyph).text((cell / 2, cell / 2), ch, font=font, fill=255, anchor="mm")
        turn = np.rad2deg(theta) - 90 if smile else np.rad2deg(theta) - 270  # letters upright on the arc
        glyph = glyph.rotate(-turn, resample=Image.BICUBIC)
        x, y = centre + radius * np.array([np.cos(theta), np.sin(theta)])
        ink = np.asarray(glyph) > 96
        if not ink.any():
            continue
        x0, y0 = int(round(x - cell / 2)), int(round(y - cell / 2))
        page.paste(0, (x0, y0), glyph)
        ys, xs = np.nonzero(ink)
        pts = np.stack([xs + x0, ys + y0], axis=1).astype(np.float32)
        hull = cv2.convexHull(pts).astype(np.int32)
        cv2.fillPoly(truth, [hull], 1)
    truth = cv2.morphologyEx(truth, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (15, 15)))
    image = np.asarray(page.convert("RGB"))
    if rng.random() < 0.25:
        image, truth = np.ascontiguousarray(np.rot90(image)), np.ascontiguousarray(np.rot90(truth))
    return np.ascontiguousarray(image), truth.astype(bool)


def _mask(points: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    cv2.fillPoly(mask, [np.round(points).astype(np.int32)], 1)
    return mask.astype(bool)


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    union = (a | b).sum()
    return float((a & b).sum() / union) if union else 0.0


def best(regions: list[np.ndarray], truth: np.ndarray) -> tuple[float, int]:
    """IoU of the region (pixel polygons) that overlaps ``truth`` most, and how many regions there are."""
    if not regions:
        return 0.0, 0
    masks = [_mask(r, truth.shape) for r in regions]
    k = int(np.argmax([(m & truth).sum() for m in masks]))
    return _iou(masks[k], truth), len(regions)


def main(argv: list[str] | None = None) -> int:
    from vision.predictors.detection.predictor import detection_predictor
    from vision.predictors.recognition.lexicon import load_lexicon

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--read", action="store_true",
                    help="also read each page with the whole OCR, without and with outlines (the curved stage)")
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/curved_outlines.json"))
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    vocabulary = sorted(w for w in load_lexicon("en").words if 5 <= len(w) <= 12 and w.isalpha())
    straight = detection_predictor(device="cpu", outlines=True)
    rotated = detection_predictor(device="cpu", assume_straight_pages=False)
    if args.read:
        from vision import ocr_predictor

        plain_ocr = ocr_predictor(device="cpu", photo="off")
        curved_ocr = ocr_predictor(device="cpu", photo="off", outlines=True)
    rows, t0 = [], time.time()
    for _ in range(args.words):
        word = vocabulary[int(rng.integers(len(vocabulary)))]
        image, truth = arc_page(word, rng)
        h, w = truth.shape
        out, quads = straight([image])[0], rotated([image])[0]
        boxes = [np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) * [w, h] for x0, y0, x1, y1 in out.boxes]
        o_iou, n = best([o * [w, h] for o in out.outlines], truth)
        b_iou, _ = best(boxes, truth)
        q_iou, _ = best([q * [w, h] for q in quads.polygons], truth)
        points = max((len(o) for o in out.outlines), default=0)
        rows.append({"word": word, "outline": o_iou, "box": b_iou, "quad": q_iou, "regions": n, "points": points})
    if args.read:  # the whole OCR without and with outlines (curved words read again unbent)
        rng = np.random.default_rng(args.seed)
        pages = [arc_page(vocabulary[int(rng.integers(len(vocabulary)))], rng) for _ in range(args.words)]
        for row, (image, _) in zip(rows, pages):
            for name, ocr in (("read_plain", plain_ocr), ("read_outlines", curved_ocr)):
                texts = [w.value.lower() for w in ocr([image]).pages[0].words]
                row[name] = row["word"].lower() in texts
    found = [r for r in rows if r["regions"]]
    report = {
        "words": len(rows),
        "seed": args.seed,
        "found": len(found),
        "one_region": sum(r["regions"] == 1 for r in rows),
        "mean_iou": {k: round(float(np.mean([r[k] for r in found])), 4) for k in ("outline", "box", "quad")},
        "outline_better": {k: sum(r["outline"] > r[k] for r in found) for k in ("box", "quad")},
        **({"read": {k: sum(r[k] for r in rows) for k in ("read_plain", "read_outlines")},
            "reread": curved_ocr.pipeline["curved"].reread, "changed": curved_ocr.pipeline["curved"].changed}
           if args.read else {}),
        "outline_points_median": float(np.median([r["points"] for r in found])) if found else 0.0,
        "seconds": round(time.time() - t0, 1),
    }
    print(json.dumps(report))
    Path(args.out).write_text(json.dumps({**report, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
