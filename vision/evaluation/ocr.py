"""End-to-end OCR: detection P/R/F1, end-to-end word F1, page CER in reading order, and pages/s.

Scores follow ``../shared/data/README.md`` through :mod:`vision.evaluation.metrics`: word boxes matched
one-to-one in decreasing IoU (>= 0.5, and 0.3 beside it), a match counting end to end when the texts are
equal ignoring case; page CER between the reading-order texts of both sides (same row rule); predictions
lying mostly on ``ignore`` regions dropped first; line-level sets split into word boxes.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, Callable, Sequence

import numpy as np

from vision.evaluation.data import EvalSet, PageSample, open_set
from vision.evaluation.metrics import (
    Counts,
    cer_counts,
    detection_counts,
    drop_ignored,
    end_to_end_counts,
    ground_truth_words,
    reading_order_text,
)
from vision.structures import Document

__all__ = ["TASK", "add_arguments", "run", "evaluate_ocr", "score_page"]

TASK = "ocr"
_ALSO_IOU = 0.3  # README: F1 at 0.3 beside 0.5 tells box-convention misses from real ones


def _summary(c: Counts) -> dict[str, float | int]:
    return {
        "precision": round(c.precision, 4),
        "recall": round(c.recall, 4),
        "f1": round(c.f1, 4),
        "tp": c.tp,
        "n_pred": c.n_pred,
        "n_gt": c.n_gt,
    }


def score_page(
    sample: PageSample,
    size: tuple[int, int],
    pred_boxes: np.ndarray,
    pred_texts: Sequence[str],
    iou_thresholds: Sequence[float],
) -> dict[str, Any]:
    """Counts of one page.

    Args:
        sample: the page's ground truth.
        size: ``(height, width)`` of the image the predictions refer to.
        pred_boxes: ``float[M, 4]`` relative word boxes; pred_texts: their texts.

    Returns:
        ``{"det": {thr: Counts}, "e2e": {thr: Counts}, "cer": (distance, length)}``.
    """
    h, w = size
    gt, gt_texts, ignore = ground_truth_words(sample.words, sample.level)
    pred = np.asarray(pred_boxes, dtype=np.float64).reshape(-1, 4) * [w, h, w, h]
    keep = drop_ignored(pred, ignore)
    kept_texts = [t for t, k in zip(pred_texts, keep) if k]
    return {
        "det": {t: detection_counts(gt, pred, t, ignore) for t in iou_thresholds},
        "e2e": {t: end_to_end_counts(gt, gt_texts, pred, pred_texts, t, ignore) for t in iou_thresholds},
        "cer": cer_counts(reading_order_text(gt, gt_texts), reading_order_text(pred[keep], kept_texts)),
    }


def evaluate_ocr(
    predict: Callable[[list[np.ndarray]], Document],
    pages: EvalSet,
    iou_thresholds: Sequence[float] = (0.5, _ALSO_IOU),
    batch_size: int = 4,
) -> dict[str, Any]:
    """Score an OCR predictor (pages -> :class:`Document`) on a page set.

    ``seconds`` and ``pages_per_s`` cover the predictor calls only (the set's image decoding is excluded,
    as in ``vision eval detection``).
    """
    if pages.kind != "page":
        raise ValueError(f"{pages.name} is a {pages.kind} set; OCR needs a page set")
    det = {t: Counts() for t in iou_thresholds}
    e2e = {t: Counts() for t in iou_thresholds}
    dist = length = 0
    seconds = 0.0
    samples: list[PageSample] = list(pages)  # type: ignore[arg-type]
    for start in range(0, len(samples), batch_size):
        chunk = samples[start : start + batch_size]
        images = [s.load_image() for s in chunk]
        t0 = time.perf_counter()
        doc = predict(images)
        seconds += time.perf_counter() - t0
        for sample, image, page in zip(chunk, images, doc.pages):
            words = page.words
            scores = score_page(
                sample,
                image.shape[:2],
                np.array([wd.geometry for wd in words]),
                [wd.value for wd in words],
                iou_thresholds,
            )
            for t in iou_thresholds:
                det[t] = det[t] + scores["det"][t]
                e2e[t] = e2e[t] + scores["e2e"][t]
            dist, length = dist + scores["cer"][0], length + scores["cer"][1]
    return {
        "set": pages.name,
        "pages": len(samples),
        "seconds": round(seconds, 3),
        "pages_per_s": round(len(samples) / seconds, 3) if seconds else None,
        "detection": {str(t): _summary(c) for t, c in det.items()},
        "end_to_end": {str(t): _summary(c) for t, c in e2e.items()},
        "cer": round(dist / length, 4) if length else None,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``vision eval ocr``."""
    parser.add_argument("--data", required=True, help="a page set folder (holding index.json)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--det-arch", default=None, help="registered detection model (default: the default)")
    parser.add_argument(
        "--reco-arch", default=None, help="registered recognition model (default: the default)"
    )
    parser.add_argument("--det-weights", default="default", help="'default', a safetensors file, or 'none'")
    parser.add_argument("--reco-weights", default="default", help="'default', a safetensors file, or 'none'")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N pages")
    parser.add_argument("--batch-size", type=int, default=4, help="pages per predictor call")


def _weights(value: str) -> str | None:
    return None if value.lower() in ("none", "random") else value


def run(args: argparse.Namespace) -> int:
    """Score the OCR predictor on ``--data`` and print the scores (or JSON with ``--json``)."""
    from vision.pipelines.ocr import ocr_predictor

    pages = open_set(args.data, limit=args.limit)
    predictor = ocr_predictor(
        args.det_arch,
        args.reco_arch,
        det_weights=_weights(args.det_weights),
        reco_weights=_weights(args.reco_weights),
        device=args.device,
        pages_per_batch=args.batch_size,
    )
    report = evaluate_ocr(predictor, pages, (0.5, _ALSO_IOU), batch_size=args.batch_size)
    report.update(det_arch=args.det_arch or "default", reco_arch=args.reco_arch or "default")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{report['set']}: {report['pages']} pages, {report['pages_per_s']} pages/s, page CER {report['cer']}"
    )
    for name in ("detection", "end_to_end"):
        for t, s in report[name].items():
            print(
                f"  {name:<10} IoU>={t}: precision {s['precision']:.4f}  recall {s['recall']:.4f}  "
                f"F1 {s['f1']:.4f}  ({s['tp']} matched / {s['n_pred']} predicted / {s['n_gt']} ground truth)"
            )
    return 0
