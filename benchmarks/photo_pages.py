"""Ways of reading photos, on synthetic photos: polarity, boxes, post-processing (`pipelines/ocr/photo.py`).

    python benchmarks/photo_pages.py [--pages 600] [--seed 5150] [--variants default,negative,rotated,document_post]

The ``polarity`` stage inverts every mostly dark page (light text on a dark screen or slide reads better
for the document models); most photos of streets and shops are dark by that measure too. This script draws
synthetic photos with the photo detector's generator (``scene_validation_pages``: scenes, photographed
documents, video frames and screens, text-free photos; seeds ``[seed, i]``, apart from training's, which are
under 100) on the 8 *held-out* wallpapers (``.cache/photos/holdout``, never drawn in training), and reads
each with the whole OCR pipeline (CPU) in each of ``--variants``:

* ``default``: the shipped pipeline (a page the gate calls a photo gets its own polarity back before the
  photo detector, whose post-processing ``calibrate_scenes`` chose on synthetic photos: ``bin_thresh`` 0.3,
  ``box_thresh`` 0.5, ``unclip_ratio`` 0.6, no pad; ``docs/models/detection_photo.md``);
* ``negative``: photos stay inverted (the polarity stage without the mark that lets the photo stage undo it);
* ``rotated``: ``assume_straight_pages=False`` (rotated quads, crops warped upright);
* ``document_post``: the photo detector with the default detector's post-processing (``unclip_ratio`` 0.4,
  ``pad`` 2, calibrated on PDF pages);
* ``large``: the photo detector reads photos at up to 1280 px (:data:`LARGE_SHAPES`) instead of 1024.

Scores: detection precision, recall and F1 of the OCR's words against the words' boxes (IoU 0.5, illegible
words ignored, as ``vision eval ocr`` scores ``ic15_dev``), over all pages and over the dark pages (those the
polarity stage inverts; ``negative`` differs from ``default`` only on those the gate calls photos), and
words per text-free page. Fonts, word lists and PDF pages: ``.carry/det`` (the detector's training assets,
``docs/models/detection.md``). Never evaluation data. Writes ``--out`` (``benchmarks/results/photo_pages.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))


LARGE_SHAPES = ((1280, 1280), (960, 1280), (1280, 960), (704, 1280), (1280, 704))
"""Photo detector input shapes of the ``large`` variant: a 1280 x 720 frame is read at 0.98x, not 0.71x."""


def negative_polarity(states: list) -> list:
    """The polarity stage's inversion without ``PageState.inverted``: photos stay negatives."""
    from vision.pipelines.ocr.polarity import is_dark

    for s in states:
        if s.needs_ocr and is_dark(s.image):
            s.image = 255 - s.image
    return states


def build(variant: str):
    """The OCR predictor of one variant (see the module docstring)."""
    from vision.pipelines.ocr.options import OCROptions
    from vision.pipelines.ocr.predictor import ocr_predictor

    if variant not in ("default", "negative", "rotated", "document_post", "large"):
        raise SystemExit(f"unknown variant {variant!r}")
    predictor = ocr_predictor(options=OCROptions(device="cpu", assume_straight_pages=variant != "rotated"))
    if variant == "negative":
        predictor.pipeline = predictor.pipeline.replace("polarity", negative_polarity)
    if variant in ("document_post", "large"):
        from dataclasses import replace

        lazy = predictor.pipeline["detect"].photo_predictor
        lazy([np.full((64, 64, 3), 255, np.uint8)])  # builds the photo detector
        built = lazy._cell[0]
        if variant == "document_post":
            built.params = replace(built.params, bin_thresh=0.3, box_thresh=0.5, unclip_ratio=0.4, pad=2.0)
        else:
            built.shapes = LARGE_SHAPES
    return predictor


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5150)
    ap.add_argument("--assets", default=str(REPO / ".carry/det"), help="fonts/, words/, pdfpages/")
    ap.add_argument("--photos", default=str(REPO / ".cache/photos/holdout"))
    ap.add_argument("--variants", default="default,negative,rotated,document_post",
                    help="comma-separated, see the module docstring")
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/photo_pages.json"))
    args = ap.parse_args()
    import cv2

    from vision.evaluation.metrics import Counts, detection_counts
    from vision.pipelines.ocr.polarity import is_dark
    from vision.training.detection_data import DataConfig, scene_validation_pages

    cv2.setNumThreads(1)
    a = Path(args.assets)
    cfg = DataConfig(fonts_dir=str(a / "fonts"), dict_dir=str(a / "words"), pdf_dir=str(a / "pdfpages"),
                     photos_dir=args.photos, scene_share=1.0)
    t0 = time.time()
    pages = scene_validation_pages(cfg, args.pages, args.seed)
    print(f"{len(pages)} pages drawn in {time.time() - t0:.0f} s", flush=True)
    variants = {name: build(name) for name in args.variants.split(",")}
    report: dict = {"pages": len(pages), "seed": args.seed, "photos": sorted(p.name for p in Path(args.photos).glob("*.jpg"))}
    dark = [is_dark(img) for img, _, _ in pages]
    for name, predictor in variants.items():
        every, inverted, empty_words, empty_pages = Counts(), Counts(), 0, 0
        t0 = time.time()
        for (img, words, ignore), is_neg in zip(pages, dark):
            page = predictor([img]).pages[0]
            h, w = img.shape[:2]
            pred = np.array([wd.geometry for wd in page.words], np.float64).reshape(-1, 4) * [w, h, w, h]
            c = detection_counts(words.astype(np.float64), pred, 0.5, ignore)
            every = every + c
            if is_neg:
                inverted = inverted + c
            if not len(words):
                empty_pages += 1
                empty_words += c.n_pred
        report[name] = {"all": every.summary(), "dark_pages": inverted.summary(),
                        "words_per_text_free_page": round(empty_words / max(1, empty_pages), 3),
                        "seconds": round(time.time() - t0, 1)}
        print(name, json.dumps(report[name]), flush=True)
    report["dark_pages"] = int(sum(dark))
    report["text_free_pages"] = int(sum(not len(wd) for _, wd, _ in pages))
    out = Path(args.out)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"dark pages {report['dark_pages']} of {len(pages)}; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
