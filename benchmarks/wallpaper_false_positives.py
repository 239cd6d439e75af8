"""Invented text on text-free photos: the OCR defaults on 200 crops of held-out wallpaper photographs.

    python benchmarks/wallpaper_false_positives.py [--photos .cache/photos/holdout] [--crops 200] [--label NAME]

The photos are the held-out part of the wallpaper bank (:func:`vision.training.synth.photos.prepare_photos`
puts every 8th wallpaper of Debian's gnome-backgrounds, mate-backgrounds, plasma-workspace-wallpapers,
ukui-wallpapers and desktop-base in ``holdout/``; the training generators never read that folder). To make
them: ``apt-get download`` those packages, ``dpkg -x`` each into ``x/PACKAGE``, then
``prepare_photos('x', '.cache/photos')``. The 8 held out in our bank are listed in its ``photos.json``
(``split: holdout``): gnome pixels-l, mate Dune and LadyBird, plasma BytheWater, EveningGlow, Kite,
SafeLanding and ukui firstgeneration: landscapes, a kite in the sky, boats, a ladybird, flat illustrations.

Crops (seeded): photo ``i mod n``, a random window of 35-100% of its width and height (so aspect ratios
vary), fed to ``vision.ocr_predictor()`` on the CPU as it is (the predictor resizes pages). Every word the
OCR returns is invented (the photos hold no text). Reports words per image (mean), the share of crops with
any word, the default detector's raw box count and the share of crops the ``photo`` gate calls photos
(:mod:`vision.pipelines.ocr.photo`), and the words per image with the gate off (``photo="off"``: every crop
read as a document) in the same run; writes JSON to
``benchmarks/results/wallpaper_false_positives[_LABEL].json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))  # after PYTHONPATH: a package given there (a candidate) wins


def crops(folder: Path, n: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` RGB crops of the ``*.jpg`` photos in ``folder`` (see the module docstring)."""
    import cv2

    files = sorted(folder.glob("*.jpg"))
    if not files:
        raise SystemExit(f"no photos in {folder} (see the module docstring to make them)")
    photos = [cv2.imread(str(f), cv2.IMREAD_COLOR)[..., ::-1] for f in files]
    out = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        img = photos[i % len(photos)]
        h, w = img.shape[:2]
        ch, cw = int(h * rng.uniform(0.35, 1.0)), int(w * rng.uniform(0.35, 1.0))
        y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        out.append(np.ascontiguousarray(img[y:y + ch, x:x + cw]))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--photos", default=str(REPO / ".cache/photos/holdout"))
    p.add_argument("--crops", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--label", default="")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    import torch

    import vision
    from vision.models.detection._weights import DEFAULT_WEIGHTS

    torch.set_num_threads(2)
    images = crops(Path(args.photos), args.crops, args.seed)
    from vision.pipelines.base import PageState
    from vision.pipelines.ocr.photo import PhotoStage, is_photo

    ocr = vision.ocr_predictor(device="cpu")  # the defaults: the photo gate decides
    ocr_off = vision.ocr_predictor(device="cpu", photo="off")  # every page read as a document
    det = vision.detection_predictor(device="cpu")
    words, words_off, boxes, photos, t0 = [], [], [], 0, time.time()
    examples: list[str] = []
    gate = ocr.pipeline["photo"]
    assert isinstance(gate, PhotoStage)
    for img in images:
        page = ocr([img]).pages[0]
        words.append(len(page.words))
        words_off.append(len(ocr_off([img]).pages[0].words))
        examples += [w.value for w in page.words][:3]
        found = det([img])[0].boxes
        boxes.append(len(found))
        photos += is_photo(PageState(page=None, image=img, boxes=found), gate.options)  # type: ignore[arg-type]
    report = {
        "photos": sorted(f.name for f in Path(args.photos).glob("*.jpg")),
        "crops": len(images),
        "words_per_image": round(float(np.mean(words)), 3),
        "crops_with_words": round(float(np.mean(np.array(words) > 0)), 3),
        "max_words": int(max(words)),
        "words_per_image_photo_off": round(float(np.mean(words_off)), 3),
        "crops_with_words_photo_off": round(float(np.mean(np.array(words_off) > 0)), 3),
        "detector_boxes_per_image": round(float(np.mean(boxes)), 3),
        "called_photos": round(photos / len(images), 3),
        "example_words": examples[:20],
        "detector_sha256": {k: DEFAULT_WEIGHTS[k].sha256 for k in ("db_mobilenet_v3_large", "db_mobilenet_v3_large_photo")},
        "seconds": round(time.time() - t0, 1),
        "machine": f"{platform.machine()}, {torch.get_num_threads()} threads",
    }
    out = Path(args.out or REPO / f"benchmarks/results/wallpaper_false_positives{'_' + args.label if args.label else ''}.json")
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
