"""Word detection: precision, recall and F1 of word boxes at an IoU threshold, and pages/s."""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable, Sequence

import numpy as np

from vision.evaluation._common import ALSO_IOU, TimedPages, add_page_set_arguments, format_counts
from vision.evaluation.data import EvalSet, open_set
from vision.evaluation.metrics import Counts, detection_counts, ground_truth_words

__all__ = ["TASK", "add_arguments", "run", "evaluate_detection"]

TASK = "detection"


def evaluate_detection(
    predict: Callable[[Sequence[np.ndarray]], Sequence[Any]],
    pages: EvalSet,
    iou_thresholds: Sequence[float] = (0.5, ALSO_IOU),
    batch_size: int = 4,
) -> dict[str, Any]:
    """Score a detector on a page set.

    Args:
        predict: pages (``uint8[H, W, 3]``) -> results with ``boxes float[N, 4]`` relative xyxy.
        pages: a page set from :func:`vision.evaluation.data.open_set`.
        iou_thresholds: thresholds to score at (each gets its own counts).
        batch_size: pages handed to ``predict`` per call.

    Returns:
        ``{"pages", "seconds", "pages_per_s", "iou": {thr: {"precision", "recall", "f1", "tp", "n_pred",
        "n_gt"}}}``; ``seconds`` covers ``predict`` only (not image decoding).
    """
    timed = TimedPages(pages, "detection", batch_size)
    totals = {t: Counts() for t in iou_thresholds}
    for chunk, images, results in timed.predict(predict):
        for sample, image, res in zip(chunk, images, results):
            h, w = image.shape[:2]
            gt, _, ignore = ground_truth_words(sample.words, sample.level)
            pred = np.asarray(res.boxes, dtype=np.float64).reshape(-1, 4) * np.array([w, h, w, h])
            for t in iou_thresholds:
                totals[t] = totals[t] + detection_counts(gt, pred, t, ignore)
    return {
        **timed.report(),
        "iou": {str(t): c.summary() for t, c in totals.items()},
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``vision eval detection``."""
    add_page_set_arguments(parser)
    parser.add_argument("--arch", default=None, help="registered detection model (default: the default one)")
    parser.add_argument("--weights", default="default", help="'default' or a safetensors file")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    parser.add_argument("--iou", type=float, default=0.5, help="IoU threshold of a match (default 0.5)")


def run(args: argparse.Namespace) -> int:
    """Score the detector on ``--data``; prints P/R/F1 (at --iou and 0.3) and pages/s."""
    from vision.predictors.detection.predictor import detection_predictor

    pages = open_set(args.data, limit=args.limit)
    predictor = detection_predictor(
        args.arch, weights=args.weights, device=args.device, batch_size=args.batch_size
    )
    thresholds = tuple(dict.fromkeys((args.iou, ALSO_IOU)))
    report = evaluate_detection(predictor, pages, thresholds, batch_size=args.batch_size)
    report["arch"] = args.arch or "default"
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['set']}: {report['pages']} pages, {report['pages_per_s']} pages/s")
    for t, s in report["iou"].items():
        print(f"  IoU>={t}: {format_counts(s)}")
    return 0
