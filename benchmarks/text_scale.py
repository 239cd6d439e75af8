"""The ``text_scale`` stage's rule on synthetic pages seen close up, before any evaluation set is read.

    python benchmarks/text_scale.py [--pages 30] [--offset 0] [--seed 9100] [--grid] [--out FILE]

Three held-out sets of ``benchmarks/detector_synthetic.py`` (document pages, close-up receipt photos, the same
with letter-spaced capitals; pages ``offset .. offset + pages``) are each seen at four zooms: the page as
drawn, and a random window of 1/1.5, 1/2.2 and 1/3 of it enlarged back to the page's size (bicubic), as a
phone held closer would show it; words cut by the window are ignored. The default detector reads every
zoomed page once at each of seven detector zooms (1.0 to 0.35, :class:`DetectionPredictor` ``zooms``), and
the page's first-pass median word height (input pixels) decides which one a rule reads. Prints word F1 at
IoU 0.5 per set and zoom for one pass and for :class:`~vision.pipelines.ocr.text_scale.TextScale`'s
defaults (the zoom nearest the rule's), and with ``--grid`` the settings that gain most on the enlarged
pages while no set as drawn loses more than 0.002.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

SETS = ("document_pages", "receipt_photos", "letter_spaced_receipt_photos")
ZOOMS = (1.0, 1.5, 2.2, 3.0)
SHRINKS = (1.0, 0.85, 0.7, 0.6, 0.5, 0.42, 0.35)


def enlarge(image: np.ndarray, boxes: np.ndarray, ignore: np.ndarray, zoom: float, rng: np.random.Generator
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random ``1/zoom`` window of ``image`` enlarged back to its size; the words inside it, and the ignore
    regions with the words the window cuts."""
    import cv2

    if zoom == 1.0:
        return image, boxes, ignore
    h, w = image.shape[:2]
    big = cv2.resize(image, (round(w * zoom), round(h * zoom)), interpolation=cv2.INTER_CUBIC)
    x0, y0 = int(rng.integers(0, big.shape[1] - w + 1)), int(rng.integers(0, big.shape[0] - h + 1))
    shift = np.array([x0, y0, x0, y0], np.float64)
    b = np.asarray(boxes, np.float64).reshape(-1, 4) * zoom - shift
    ig = np.asarray(ignore, np.float64).reshape(-1, 4) * zoom - shift
    inside = (b[:, 0] >= 0) & (b[:, 1] >= 0) & (b[:, 2] <= w) & (b[:, 3] <= h)
    touch = (b[:, 2] > 0) & (b[:, 3] > 0) & (b[:, 0] < w) & (b[:, 1] < h)
    cut = np.clip(b[touch & ~inside], 0, [w, h, w, h])
    return np.ascontiguousarray(big[y0:y0 + h, x0:x0 + w]), b[inside], np.concatenate([ig, cut])


def measure(pages: int, offset: int, seed: int, bank: str) -> list[dict]:
    """One row per set, page and zoom: the first pass's median word height and ``(tp, predictions)`` per
    detector zoom."""
    from detector_synthetic import page_sets

    from vision.evaluation.metrics import drop_ignored, greedy_match
    from vision.predictors.detection.predictor import detection_predictor, fitted_size, pick_shape

    det = detection_predictor(device="cpu")
    rows = []
    for name, drawn in page_sets(bank, pages + offset, SETS).items():
        for i, page in enumerate(drawn[offset:], start=offset):
            ignore = page[2] if len(page) > 2 else np.zeros((0, 4))
            for k, zoom in enumerate(ZOOMS):
                rng = np.random.default_rng([seed, i, k])
                image, truth, ig = enlarge(page[0], page[1], ignore, zoom, rng)
                if not len(truth):
                    continue
                h, w = image.shape[:2]
                fitted = fitted_size((h, w), pick_shape(h, w, det.shapes))[0]
                row = {"set": name, "page": i, "zoom": zoom, "truth": len(truth), "found": {}}
                for shrink in SHRINKS:
                    boxes = det([image], [shrink])[0].boxes.reshape(-1, 4).astype(np.float64) * [w, h, w, h]
                    if shrink == 1.0:
                        row["words"], row["median"] = len(boxes), float(
                            np.median(boxes[:, 3] - boxes[:, 1]) * fitted / h) if len(boxes) else 0.0
                    boxes = boxes[drop_ignored(boxes, ig)]
                    row["found"][str(shrink)] = (len(greedy_match(truth, boxes, 0.5)) if len(boxes) else 0,
                                                 len(boxes))
                rows.append(row)
    return rows


def f1(rows: list[dict], choose) -> float:
    tp = found = truth = 0
    for r in rows:
        t, n = r["found"][str(choose(r))]
        tp, found, truth = tp + t, found + n, truth + r["truth"]
    return 2 * tp / max(found + truth, 1)


def rule(trigger: float, target: float, min_zoom: float, min_words: int = 5):
    """The stage's zoom for a row, snapped to the nearest measured detector zoom."""
    def choose(r: dict) -> float:
        if r["words"] < min_words or r["median"] <= trigger:
            return 1.0
        zoom = max(min_zoom, target / r["median"])
        return min(SHRINKS, key=lambda s: abs(s - zoom))
    return choose


def main() -> None:
    from vision.pipelines.ocr.text_scale import TextScale

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=30)
    ap.add_argument("--offset", type=int, default=0, help="first page index of each set (a fresh draw)")
    ap.add_argument("--seed", type=int, default=9100, help="seed of the enlarged windows")
    ap.add_argument("--bank", default=".carry/reco")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    rows = measure(args.pages, args.offset, args.seed, args.bank)
    default = TextScale()
    shipped = rule(default.trigger, default.target, default.min_zoom, default.min_words)
    report = {"pages": args.pages, "offset": args.offset, "seed": args.seed, "sets": {}}
    for name, zoom in itertools.product(SETS, ZOOMS):
        part = [r for r in rows if r["set"] == name and r["zoom"] == zoom]
        entry = {"pages": len(part), "one_pass": round(f1(part, lambda r: 1.0), 4),
                 "text_scale": round(f1(part, shipped), 4), "read_again": sum(shipped(r) < 1 for r in part)}
        report["sets"][f"{name} x{zoom}"] = entry
        print(f"{name:30s} x{zoom:<4} {entry}")
    if args.grid:
        drawn = [[r for r in rows if r["set"] == s and r["zoom"] == 1.0] for s in SETS]
        closer = [r for r in rows if r["zoom"] > 1.0]
        grid = []
        settings = itertools.product((20, 24, 28, 32, 36), (12, 16, 20, 22), (0.35, 0.42, 0.5))
        for trigger, target, min_zoom in settings:
            if target > trigger:
                continue
            choose = rule(trigger, target, min_zoom)
            worst = min(f1(d, choose) - f1(d, lambda r: 1.0) for d in drawn)
            if worst >= -0.002:
                gain = f1(closer, choose) - f1(closer, lambda r: 1.0)
                grid.append((round(gain, 5), trigger, target, min_zoom))
        report["grid"] = sorted(grid, reverse=True)[:10]
        print("gain on enlarged pages, trigger, target, min_zoom:", report["grid"])
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
