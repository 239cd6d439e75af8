"""Does OCR survive turned and skewed pages? Orientation decisions and words kept, with the shipped models.

    python benchmarks/orientation_check.py [--data ../shared/data/funsd_dev] [--pages 10] [--device cpu]

Pages (the bundled sample page plus ``--pages`` dev pages) are turned by 90, 180 and 270 degrees and read
with ``detect_orientation=True``, and skewed by +-5 and +-10 degrees and read with
``assume_straight_pages=False``. For each case: how often the orientation decision is right, and the
bag-of-words F1 of the words read against those read on the upright page with default options (1.0 means
the same words came back). "skew and back" turns the page by the angle and back before reading it
straight: the loss from resampling twice alone, a ceiling for the skew rows (which resample twice too).
Prints a table; writes JSON (default ``benchmarks/results/orientation.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.pipelines.ocr.orientation import rotate_image  # noqa: E402


def skew(image: np.ndarray, angle: float) -> np.ndarray:
    """The page turned clockwise by ``angle`` degrees about its centre, corners filled with white."""
    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), -angle, 1.0)
    return cv2.warpAffine(image, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=(255, 255, 255))


def bag_f1(reference: list[str], found: list[str]) -> float:
    """F1 of two word multisets (case-insensitive)."""
    a, b = Counter(w.casefold() for w in reference), Counter(w.casefold() for w in found)
    tp = sum((a & b).values())
    return 2 * tp / (sum(a.values()) + sum(b.values())) if a or b else 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "funsd_dev")
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--device", default=None)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "orientation.json")
    args = parser.parse_args(argv)

    from vision.assets.make_sample import render_sample
    from vision.evaluation.data import open_set
    from vision.pipelines.ocr.predictor import ocr_predictor

    pages = [np.asarray(render_sample()[0])]
    if args.data.is_dir() and args.pages:
        pages += [s.load_image() for s in open_set(args.data, limit=args.pages)]
    plain = ocr_predictor(device=args.device)
    turned = ocr_predictor(device=args.device, detect_orientation=True)
    rotated = ocr_predictor(device=args.device, assume_straight_pages=False)
    reference = [[w.value for w in plain([p]).pages[0].words] for p in pages]

    rows = []
    for degrees in (0, 90, 180, 270):
        right, f1 = 0, []
        for page, ref in zip(pages, reference):
            out = turned([rotate_image(page, degrees)]).pages[0]
            right += out.orientation == (360 - degrees) % 360
            f1.append(bag_f1(ref, [w.value for w in out.words]))
        rows.append(
            {
                "case": f"turned {degrees}",
                "orientation_right": right / len(pages),
                "words_f1": round(float(np.mean(f1)), 4),
            }
        )
    for angle in (-10.0, -5.0, 5.0, 10.0):
        f1 = [
            bag_f1(ref, [w.value for w in plain([skew(skew(p, angle), -angle)]).pages[0].words])
            for p, ref in zip(pages, reference)
        ]
        rows.append({"case": f"skew {angle:+.0f} and back", "words_f1": round(float(np.mean(f1)), 4)})
        for name, predictor in (("straight", plain), ("rotated", rotated)):
            f1 = [
                bag_f1(ref, [w.value for w in predictor([skew(p, angle)]).pages[0].words])
                for p, ref in zip(pages, reference)
            ]
            rows.append(
                {"case": f"skew {angle:+.0f} ({name} boxes)", "words_f1": round(float(np.mean(f1)), 4)}
            )

    print(f"{len(pages)} pages (sample + {len(pages) - 1} from {args.data.name})")
    print(f"{'case':<28} {'orientation ok':>15} {'words F1':>9}")
    for r in rows:
        ok = f"{r['orientation_right']:.2f}" if "orientation_right" in r else "-"
        print(f"{r['case']:<28} {ok:>15} {r['words_f1']:>9.4f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"pages": len(pages), "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
