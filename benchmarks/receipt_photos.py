"""The OCR's options on synthetic close-up phone photos of receipts, before any evaluation set is read.

    python benchmarks/receipt_photos.py [--pages 100] [--bank .carry/reco] [--set DIR] [--variants ...]

Draws ``--pages`` receipts of the detector's renderer (30% of item lines led by a lone quantity, seeds
``[6101, i]``, apart from training streams and the other benchmarks) and photographs each as
``benchmarks/detector_synthetic.py`` does (``photographed``: the receipt filling most of the frame in
perspective on a desk, uneven light, blur), its words' quads carried through the same perspective. The set is
written in the layout of ``../shared/data`` (``--set``, word level), so ``vision eval ocr --data DIR`` reads
it too, then each variant's :class:`~vision.pipelines.ocr.options.OCROptions` is scored with
:func:`~vision.evaluation.ocr.evaluate_ocr` on the CPU: detection and end-to-end F1 at IoU 0.5, page CER and
page CER with whitespace removed (the main figure of ``wildreceipt_dev``), both in the scoring rule's
row order; and ``cer_export_order``: the page CER, whitespace removed, of the text in the order the OCR
exports it (``vision ocr -f txt``) against the receipt's true line order.
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

VARIANTS = {
    "default": {},
    "level_layout": {"layout": "level"},  # the layout groups the boxes as found, never turned level
    "no_amounts": {"layout": "no_amounts"},  # prices are cells only within cell_gap of their item
    "rotated": {"assume_straight_pages": False},
    "rectify": {"rectify": True},
    "rectify_rotated": {"rectify": True, "assume_straight_pages": False},
}


def options(name: str) -> dict:
    """The ``ocr_predictor`` keyword arguments of a variant."""
    from vision.pipelines.ocr.reading_order import LayoutOptions

    kwargs = dict(VARIANTS[name])
    if kwargs.get("layout") == "level":
        kwargs["layout"] = LayoutOptions(level_lines=False)
    elif kwargs.get("layout") == "no_amounts":
        kwargs["layout"] = LayoutOptions(amount_gap=0.0)
    return kwargs


def export_order_cer(predictor, root: Path, ids: list[str]) -> float:
    """Page CER, whitespace removed, of the text as the OCR exports it (its own reading order: blocks, lines,
    words) against the receipt's true order (the renderer's words, line by line, stored in that order)."""
    import cv2

    from vision.evaluation.metrics import cer_counts

    dist = length = 0
    for pid in ids:
        gt = json.loads((root / "gt" / f"{pid}.json").read_text())
        image = cv2.cvtColor(cv2.imread(str(root / gt["image"])), cv2.COLOR_BGR2RGB)
        page = predictor([image]).pages[0]
        read = "".join(w.value for b in page.blocks for line in b.lines for w in line.words)
        d, n = cer_counts("".join("".join(w["text"] for w in gt["words"]).split()), "".join(read.split()))
        dist, length = dist + d, length + n
    return round(dist / max(length, 1), 4)


def write_set(out: Path, bank: str, n: int) -> None:
    """``n`` photographed receipts as a word-level page set at ``out``."""
    import cv2

    from detector_synthetic import bank_config, photographed_quads
    from vision.training.detection_data import PageSources

    lone = PageSources(replace(bank_config(bank), lone_quantities=0.3))
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "gt").mkdir(exist_ok=True)
    ids = []
    for i in range(n):
        page = lone.renderer(np.random.default_rng([6101, i]), "receipt")
        image, quads = photographed_quads(page.image, page.boxes, np.random.default_rng([6101, i, 1]))
        pid = f"receipt_photo_{i:04d}"
        cv2.imwrite(str(out / "images" / f"{pid}.png"), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
        words = [{"text": t, "polygon": q.round(1).tolist(), "ignore": False}
                 for t, q in zip(page.texts, quads) if t.strip()]
        gt = {"id": pid, "image": f"images/{pid}.png", "width": image.shape[1], "height": image.shape[0],
              "level": "word", "source": "synthetic", "words": words}
        (out / "gt" / f"{pid}.json").write_text(json.dumps(gt))
        ids.append(pid)
    index = {"set": out.name, "kind": "page", "level": "word", "ids": ids}
    (out / "index.json").write_text(json.dumps(index))


def main(argv: list[str] | None = None) -> int:
    from vision.evaluation.data import open_set
    from vision.evaluation.ocr import evaluate_ocr
    from vision.pipelines.ocr import ocr_predictor

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--bank", default=".carry/reco", help="python -m vision.training.assets OUT")
    ap.add_argument("--set", default="/tmp/receipt_photos", help="where the set is written (kept if present)")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--out", default=None, help="JSON file of the scores")
    args = ap.parse_args(argv)

    root = Path(args.set)
    if not (root / "index.json").is_file():
        write_set(root, args.bank, args.pages)
    pages = open_set(root, limit=args.pages)
    report = {}
    for name in args.variants:
        predictor = ocr_predictor(device="cpu", **options(name))
        r = evaluate_ocr(predictor, pages, (0.5,))
        report[name] = {"det_f1": round(r["detection"]["0.5"]["f1"], 4),
                        "e2e_f1": round(r["end_to_end"]["0.5"]["f1"], 4),
                        "cer": r["cer"], "cer_nospace": r["cer_nospace"], "pages_per_s": r["pages_per_s"],
                        "cer_export_order": export_order_cer(predictor, root, list(pages.ids))}
        print(name, report[name], flush=True)
    if args.out:
        record = {"pages": len(pages.ids), "seed": 6101, "scores": report}
        Path(args.out).write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
