"""Two detector weight files on held-out synthetic pages, before any evaluation set is read.

    python benchmarks/detector_synthetic.py OLD.safetensors NEW.safetensors [--pages 50] [--bank .carry/reco]

Seven sets drawn with seeds ``[5001..5007, i]`` (training streams use config seeds under 100): synthetic
document pages, receipts with 30% of their item lines led by a lone quantity, scene photos
(:func:`~vision.training.detection_data.scene_validation_pages`), scene photos whose photographed documents
are receipts, and close-up phone photos of receipts (the training pages' ``photo`` profile: the receipt
filling most of the frame in perspective on a desk, with uneven light and blur, as phone photos of receipts
are taken; :func:`photographed`), then synthetic document pages and close-up receipt photos with half of
their capital lines letter-spaced (``letter_spacing`` 0.5: receipt headers and display type). Each file is
read with ``unclip_ratio`` 0.5, ``bin_thresh`` 0.3, ``box_thresh`` 0.5, no pad (the labels' own extent);
prints precision, recall and F1 at IoU 0.5 per set (``--sets`` picks some). The bank is the one
``python -m vision.training.assets .carry/reco`` makes (fonts, word lists, photos).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))


def photographed_quads(image: np.ndarray, boxes: np.ndarray, rng: np.random.Generator,
                       long_side: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """``image`` as a close-up phone photo (the ``photo`` page profile of the detector's training pages) and
    its word ``boxes`` (px xyxy) carried through the same perspective: ``float32[N, 4, 2]`` quads."""
    import cv2

    from vision.training.synth.degrade import transform_points
    from vision.training.synth.page_degrade import degrade_page, page_geometry, warp_page

    s = long_side / max(image.shape[:2])
    size = (round(image.shape[1] * s), round(image.shape[0] * s))
    image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4) * s
    matrix, out_shape = page_geometry(image.shape, rng, "photo")
    image = degrade_page(warp_page(image, matrix, out_shape, rng, photo=True), rng, "photo")
    corners = boxes[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 2)
    return image, transform_points(corners, matrix).reshape(-1, 4, 2).astype(np.float32)


def photographed(image: np.ndarray, boxes: np.ndarray, rng: np.random.Generator,
                 long_side: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """:func:`photographed_quads` with each word's quad as the box around its corners (px xyxy)."""
    image, moved = photographed_quads(image, boxes, rng, long_side)
    return image, np.concatenate([moved.min(1), moved.max(1)], axis=1).astype(np.float32)


def bank_config(bank: str):
    """The detector's :class:`~vision.training.detection_data.DataConfig` over a training bank, no PDF pages."""
    from vision.training.detection_data import DataConfig

    return DataConfig(fonts_dir=f"{bank}/fonts", dict_dir=f"{bank}/words", photos_dir=f"{bank}/photos", pdf_dir="")


def page_sets(bank: str, n: int, names: Sequence[str] | None = None) -> dict[str, list]:
    """The seven held-out sets (or those in ``names``): ``{name: [(image, boxes[, ignore])]}``."""
    from vision.training.detection_data import PageSources, scene_validation_pages
    from vision.training.synth.pages import LAYOUTS

    base = bank_config(bank)
    docs = PageSources(base)
    lone = PageSources(replace(base, lone_quantities=0.3))
    spaced = PageSources(replace(base, lone_quantities=0.3, letter_spacing=0.5))
    only_receipts = {k: float(k == "receipt") for k in LAYOUTS}
    sets = {
        "document_pages": lambda: [docs(np.random.default_rng([5001, i])) for i in range(n)],
        "receipts_lone_quantities": lambda: [
            (p.image, p.boxes)
            for p in (lone.renderer(np.random.default_rng([5002, i]), "receipt") for i in range(n))
        ],
        "scene_photos": lambda: scene_validation_pages(base, n, 5003),
        "scene_photos_receipts": lambda: scene_validation_pages(
            replace(base, lone_quantities=0.3, layouts=only_receipts), n, 5004),
        "receipt_photos": lambda: [
            photographed(p.image, p.boxes, np.random.default_rng([5005, i, 1]))
            for i, p in enumerate(lone.renderer(np.random.default_rng([5005, j]), "receipt") for j in range(n))
        ],
        "letter_spaced_pages": lambda: [spaced(np.random.default_rng([5006, i])) for i in range(n)],
        "letter_spaced_receipt_photos": lambda: [
            photographed(p.image, p.boxes, np.random.default_rng([5007, i, 1]))
            for i, p in enumerate(spaced.renderer(np.random.default_rng([5007, j]), "receipt")
                                  for j in range(n))
        ],
    }
    return {k: make() for k, make in sets.items() if names is None or k in names}


def main() -> None:
    from vision.models import get_model
    from vision.ops.db_postprocess import DBOptions
    from vision.training.detection_eval import score_pages

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("weights", nargs="+", help="safetensors files of db_mobilenet_v3_large")
    ap.add_argument("--pages", type=int, default=50)
    ap.add_argument("--bank", default=".carry/reco")
    ap.add_argument("--sets", nargs="+", help="only these sets (default: all seven)")
    args = ap.parse_args()
    sets = page_sets(args.bank, args.pages, args.sets)
    params = DBOptions(bin_thresh=0.3, box_thresh=0.5, unclip_ratio=0.5, pad=0.0)
    report: dict[str, dict[str, dict[str, float]]] = {}
    for path in args.weights:
        model = get_model("db_mobilenet_v3_large", weights=path)
        for name, pages in sets.items():
            c = score_pages(model, pages, params)
            report.setdefault(path, {})[name] = {
                "precision": round(c.precision, 4), "recall": round(c.recall, 4), "f1": round(c.f1, 4)}
            print(path, name, report[path][name], flush=True)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
