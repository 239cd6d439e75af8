"""What the photo gate sees on synthetic close-up receipt photos and on synthetic scene photos.

    python benchmarks/photo_gate_receipts.py [--pages 80] [--bank .carry/reco] [--out FILE]

Close-up receipt photos as ``benchmarks/detector_synthetic.py`` draws them (seeds ``[6005, i]``, apart from that
script's and from training) and scene pages of the detector's generator (seeds ``[6003, i]``: scenes, screens
and video frames, text-free photos, photographed documents) are each read by the OCR with the defaults, the
gate's inputs recorded (the default detector's box count, :func:`~vision.pipelines.ocr.photo.page_stats`) with
its answer with and without the typeset check (:func:`~vision.pipelines.ocr.photo.typeset_shares`). Prints, per
kind, how many pages the gate calls photos and their box counts, the typeset check's shares on those with 15
boxes or more, then for each ``max_words`` (without the typeset check) the share of the scene pages called
photos that it keeps and the receipts it still calls photos.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))
sys.path.append(str(REPO / "benchmarks"))

SCENE_KINDS = ("scene", "overlay", "empty")  # photographed documents ("document") may go either way


def main(argv: list[str] | None = None) -> int:
    import vision.pipelines.ocr.photo as photo
    from detector_synthetic import bank_config, photographed
    from vision.pipelines.ocr import ocr_predictor
    from vision.training.detection_data import PageSources

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=80, help="pages of each of the two sets")
    ap.add_argument("--bank", default=".carry/reco", help="python -m vision.training.assets OUT")
    ap.add_argument("--out", default=None, help="JSON file of every page's record")
    args = ap.parse_args(argv)

    seen: list[dict] = []
    gate = photo.is_photo

    def recorded(state, options):  # the gate, its inputs kept
        answer = gate(state, options)
        paper, colour = photo.page_stats(state.image)
        h, w = state.image.shape[:2]
        boxes = np.zeros((0, 4)) if state.boxes is None else np.asarray(state.boxes, np.float64) * [w, h, w, h]
        aligned, uniform = photo.typeset_shares(boxes)
        seen.append({"boxes": len(boxes), "paper": round(paper, 3), "colour": round(colour, 3),
                     "aligned": round(aligned, 3), "uniform": round(uniform, 3), "photo": bool(answer),
                     "photo_without_typeset": bool(gate(state, replace(options, typeset_words=0)))})
        return answer

    photo.is_photo = recorded
    base = bank_config(args.bank)
    receipts = PageSources(replace(base, lone_quantities=0.3))
    scenes = PageSources(replace(base, scene_share=1.0))
    ocr = ocr_predictor(device="cpu")
    pages = []
    for i in range(args.pages):
        p = receipts.renderer(np.random.default_rng([6005, i]), "receipt")
        image, _ = photographed(p.image, p.boxes, np.random.default_rng([6005, i, 1]))
        ocr([image])
        pages.append({"kind": "receipt_photo", **seen.pop()})
    for i in range(args.pages):
        page = scenes.scene(np.random.default_rng([6003, i]))
        ocr([page.image])
        pages.append({"kind": "scene_" + page.kind, **seen.pop()})

    for kind in sorted({p["kind"] for p in pages}):
        group = [p for p in pages if p["kind"] == kind]
        called = sorted(p["boxes"] for p in group if p["photo_without_typeset"])
        print(f"{kind}: {len(group)} pages, {len(called)} called photos without the typeset check, their boxes "
              f"{called}; {sum(p['photo'] for p in group)} with it")
    for kind in sorted({p["kind"] for p in pages}):  # the typeset check's inputs on pages the rest calls photos
        shares = sorted((p["boxes"], p["aligned"], p["uniform"]) for p in pages
                        if p["kind"] == kind and p["photo_without_typeset"] and p["boxes"] >= 15)
        print(f"{kind}: (boxes, aligned, uniform) of the photos with 15 boxes or more: {shares}")
    scene = [p["boxes"] for p in pages if p["photo_without_typeset"]
             and p["kind"].removeprefix("scene_") in SCENE_KINDS]
    receipt = [p["boxes"] for p in pages if p["photo_without_typeset"] and p["kind"] == "receipt_photo"]
    for m in (80, 70, 60, 50, 45, 40, 35, 30):
        kept = sum(n < m for n in scene) / max(len(scene), 1)
        print(f"max_words {m}: scene photos kept {kept:.3f}, receipts still called photos "
              f"{sum(n < m for n in receipt)} of {len(receipt)}")
    if args.out:
        Path(args.out).write_text(json.dumps(pages, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
