"""Choose the photo gate's thresholds on synthetic pages (`vision/pipelines/ocr/photo.py`).

    python benchmarks/photo_gate.py --pdf-dir DIR --fonts-dir DIR --dict-dir DIR --photos-dir DIR [--pages 600]

Draws pages with the detector's generators (seeds 3 and 4, apart from training): half scene pages
(``scene_pages``: scenes, screens and video frames, text-free photos, photographed documents) and half
document pages through ``make_page`` with a named profile (clean, scan, fax, receipt, photo), a fifth of
them cut to a crop 10-60% of the page tall (table crops, snippets); half of the documents tinted as yellowed
paper. Photographed documents (scene kind ``document``, profile ``photo``) are left out of the score: both
answers are right. Prints, for each ``max_paper`` and ``min_colour``, the share of photos called photos and
of documents called photos (:func:`~vision.pipelines.ocr.photo.page_stats`; the word-count condition is not
applied). The rule: at most 3% of the documents, then the most photos. Writes
``benchmarks/results/photo_gate.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))

PROFILES = ("clean", "scan", "fax", "receipt", "photo")
PROFILE_P = (0.15, 0.4, 0.15, 0.1, 0.2)


def pages(args: argparse.Namespace, seed: int, n: int) -> list[tuple[np.ndarray, str]]:
    """``n`` (320-px thumbnail, kind) pairs; kinds ``photo_<scene kind>``, ``doc_<profile>``, ``crop_<profile>``."""
    from vision.training.detection_data import DataConfig, PageSources, make_page

    cfg = DataConfig(pdf_dir=args.pdf_dir, fonts_dir=args.fonts_dir, dict_dir=args.dict_dir,
                     photos_dir=args.photos_dir, scene_share=1.0)
    src = PageSources(cfg)
    out = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        r = rng.random()
        if r < 0.5:
            page = src.scene(rng)
            img, kind = page.image, "photo_" + page.kind
        else:
            image, boxes = src(rng)
            prof = PROFILES[int(rng.choice(len(PROFILES), p=PROFILE_P))]
            img, _ = make_page(image, boxes, rng, cfg, profile=prof)
            kind = "doc_" + prof
            if r > 0.8:
                h, w = img.shape[:2]
                ch, cw = int(h * rng.uniform(0.1, 0.6)), int(w * rng.uniform(0.3, 1.0))
                y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
                img, kind = img[y:y + ch, x:x + cw], "crop_" + prof
        s = 320 / max(img.shape[:2])
        thumb = cv2.resize(img, (max(1, round(img.shape[1] * s)), max(1, round(img.shape[0] * s))),
                           interpolation=cv2.INTER_AREA)
        out.append((thumb, kind))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("pdf-dir", "fonts-dir", "dict-dir", "photos-dir"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--pages", type=int, default=600, help="pages in all, drawn half with seed 3, half with 4")
    args = p.parse_args()
    from vision.pipelines.ocr.photo import page_stats

    cv2.setNumThreads(1)
    stats, kinds = [], []
    rng = np.random.default_rng(0)
    for seed in (3, 4):
        for thumb, kind in pages(args, seed, args.pages // 2):
            if not kind.startswith("photo_") and rng.random() < 0.5:  # yellowed paper
                tint = np.array([1.0, rng.uniform(0.88, 1.0), rng.uniform(0.7, 0.95)], np.float32)
                thumb = np.clip(thumb * tint, 0, 255).astype(np.uint8)
            stats.append(page_stats(thumb))
            kinds.append(kind)
    x, k = np.array(stats), np.array(kinds)
    photos = np.isin(k, ["photo_scene", "photo_overlay", "photo_empty"])
    docs = np.array([(s.startswith(("doc_", "crop_"))) and not s.endswith("_photo") for s in k])
    grid = []
    for max_paper in (0.4, 0.45, 0.5, 0.55, 0.6):
        for min_colour in (None, 0.1, 0.2, 0.3):
            called = (x[:, 0] < max_paper) | ((x[:, 1] > min_colour) if min_colour is not None else False)
            grid.append({"max_paper": max_paper, "min_colour": min_colour,
                         "photos_called": round(float(called[photos].mean()), 3),
                         "documents_called": round(float(called[docs].mean()), 3)})
            print(grid[-1])
    ok = [g for g in grid if g["documents_called"] <= 0.03]
    best = max(ok, key=lambda g: (g["photos_called"], -g["documents_called"]))
    print("chosen:", best)
    report = {"photos": int(photos.sum()), "documents": int(docs.sum()), "left_out": int((~photos & ~docs).sum()),
              "grid": grid, "chosen": best}
    (REPO / "benchmarks/results/photo_gate.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
