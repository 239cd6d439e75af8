"""How well does the layout find non-text regions? Precision and recall on rendered pages with known figures.

    python benchmarks/regions_check.py [--pages 60] [--seed 0] [--out FILE]

Each page (US letter at 150 dpi) gets DejaVu paragraphs, ruled tables and bands of one or two figures at
known places: photo-like fields (smooth colour plus noise), bar charts (thin bars and axes on white) and
solid logos. :func:`vision.pipelines.ocr.reading_order.find_regions` runs with the words' true boxes, so this
measures the region rule itself; a region counts when it overlaps a true figure with IoU >= 0.5.
Prints a table per figure kind; writes JSON (default ``benchmarks/results/regions.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.evaluation.metrics import greedy_match  # noqa: E402
from vision.pipelines.ocr.reading_order import LayoutOptions, find_regions  # noqa: E402

W, H = 1275, 1650
WORDS = (
    "the records were delivered on two encrypted drives and originals returned to your office payment "
    "is due within thirty days please quote invoice number with transfer questions billing"
).split()


def _figure(
    draw: ImageDraw.ImageDraw,
    image: Image.Image,
    kind: str,
    box: tuple[int, int, int, int],
    rng: np.random.Generator,
) -> None:
    x0, y0, x1, y1 = box
    if kind == "photo":
        h, w = y1 - y0, x1 - x0
        base = rng.uniform(40, 220, size=(2, 2, 3))
        field = np.asarray(Image.fromarray(base.astype(np.uint8)).resize((w, h), Image.BILINEAR), np.float64)
        field += rng.normal(0, 18, size=field.shape)
        image.paste(Image.fromarray(np.clip(field, 0, 255).astype(np.uint8)), (x0, y0))
    elif kind == "chart":
        draw.line((x0, y1, x1, y1), fill=(0, 0, 0), width=2)
        draw.line((x0, y0, x0, y1), fill=(0, 0, 0), width=2)
        bars = int(rng.integers(4, 9))
        step = (x1 - x0) // (bars + 1)
        for k in range(bars):
            top = int(rng.uniform(y0 + 10, y1 - 20))
            draw.rectangle(
                (x0 + (k + 1) * step - step // 3, top, x0 + (k + 1) * step + step // 3, y1),
                fill=tuple(int(v) for v in rng.integers(30, 200, 3)),
            )
    else:  # logo
        draw.ellipse(box, fill=tuple(int(v) for v in rng.integers(20, 180, 3)))


def render(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[tuple[str, tuple[int, ...]]]]:
    """One page: ``(image, word boxes [N, 4] relative, [(figure kind, pixel box)])``."""
    image = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", 22)
    words, figures, y = [], [], 100
    while y < H - 200:
        if rng.random() < 0.4:  # a figure band, one or two figures side by side
            height = int(rng.integers(150, 360))
            for x0, x1 in [(110, 1165)] if rng.random() < 0.5 else [(110, 600), (680, 1165)]:
                kind = str(rng.choice(["photo", "chart", "logo"]))
                width = int(rng.integers(160, x1 - x0)) if kind != "logo" else min(height, x1 - x0)
                box = (x0, y, x0 + width, y + height)
                _figure(draw, image, kind, box, rng)
                figures.append((kind, box))
            y += height + 60
        elif rng.random() < 0.3:  # a ruled table of short cells
            for r in range(5):
                draw.line((110, y + 40 * r, 1165, y + 40 * r), fill=(120, 120, 120), width=1)
                for c in range(4):
                    word = str(rng.choice(WORDS))
                    box = draw.textbbox((120 + 260 * c, y + 40 * r + 8), word, font=font)
                    draw.text((120 + 260 * c, y + 40 * r + 8), word, font=font, fill="black")
                    words.append(box)
            y += 260
        else:  # a paragraph
            for _ in range(int(rng.integers(2, 6))):
                x = 110
                while x < 1000:
                    word = str(rng.choice(WORDS))
                    box = draw.textbbox((x, y), word, font=font)
                    draw.text((x, y), word, font=font, fill="black")
                    words.append(box)
                    x = box[2] + 12
                y += 34
            y += 40
    rel = np.asarray(words, np.float64).reshape(-1, 4) / [W, H, W, H]
    return np.asarray(image), rel, figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "regions.json")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    options = LayoutOptions(regions=True)
    found = {k: [0, 0] for k in ("photo", "chart", "logo")}  # kind -> [matched, total]
    n_pred = n_tp = 0
    for _ in range(args.pages):
        image, words, figures = render(rng)
        regions = find_regions(image, words, options)
        pred = np.array([r.geometry for r in regions]).reshape(-1, 4) * [W, H, W, H]
        truth = np.array([b for _, b in figures], np.float64).reshape(-1, 4)
        pairs = greedy_match(truth, pred, 0.5)
        n_pred, n_tp = n_pred + len(pred), n_tp + len(pairs)
        matched = {g for g, _ in pairs}
        for i, (kind, _) in enumerate(figures):
            found[kind][0] += i in matched
            found[kind][1] += 1
    total = sum(t for _, t in found.values())
    report = {
        "pages": args.pages,
        "precision": round(n_tp / max(n_pred, 1), 4),
        "recall": round(n_tp / max(total, 1), 4),
        "by_kind": {k: {"recall": round(m / max(t, 1), 4), "figures": t} for k, (m, t) in found.items()},
    }
    print(
        f"{args.pages} pages, {total} figures, {n_pred} regions found: precision {report['precision']:.3f}, "
        f"recall {report['recall']:.3f} (IoU >= 0.5)"
    )
    for kind, row in report["by_kind"].items():
        print(f"  {kind:<6} recall {row['recall']:.3f} of {row['figures']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
