"""End-to-end OCR: detection P/R/F1, end-to-end word F1, page CER in reading order, and pages/s.

Scores follow ``../shared/data/README.md`` through :mod:`vision.evaluation.metrics`: word boxes matched
one-to-one in decreasing IoU (>= 0.5, and 0.3 beside it), a match counting end to end when the texts are
equal ignoring case; page CER between the reading-order texts of both sides (same row rule); predictions
lying mostly on ``ignore`` regions dropped first; line-level sets split into word boxes.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable, Sequence

import numpy as np

from vision.evaluation._common import ALSO_IOU, TimedPages, add_page_set_arguments, format_counts
from vision.evaluation.data import EvalSet, PageSample, open_set
from vision.evaluation.metrics import (
    Counts,
    cer_counts,
    detection_counts,
    drop_ignored,
    edit_counts,
    end_to_end_counts,
    ground_truth_words,
    reading_order_text,
)
from vision.pipelines.ocr.options import add_model_arguments, options_from_args
from vision.structures import Document

__all__ = ["TASK", "WORST_PAGES", "add_arguments", "run", "evaluate_ocr", "score_page"]

TASK = "ocr"
WORST_PAGES = 10
"""Pages listed in the report's ``worst_pages``."""


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
        ``{"det": {thr: Counts}, "e2e": {thr: Counts}, "cer": (distance, length), "cer_ci": the same
        case-insensitive, "cer_nospace": the same with every whitespace removed from both texts,
        "cer_errors" / "cer_nospace_errors": the distances of "cer" / "cer_nospace" as missing, extra and
        wrong characters}``.
    """
    h, w = size
    gt, gt_texts, ignore = ground_truth_words(sample.words, sample.level)
    pred = np.asarray(pred_boxes, dtype=np.float64).reshape(-1, 4) * [w, h, w, h]
    keep = drop_ignored(pred, ignore)
    kept_texts = [t for t, k in zip(pred_texts, keep) if k]
    truth, read = reading_order_text(gt, gt_texts), reading_order_text(pred[keep], kept_texts)
    truth_ns, read_ns = "".join(truth.split()), "".join(read.split())
    errors, errors_ns = edit_counts(truth, read), edit_counts(truth_ns, read_ns)  # one alignment each
    return {
        "det": {t: detection_counts(gt, pred, t, ignore) for t in iou_thresholds},
        "e2e": {t: end_to_end_counts(gt, gt_texts, pred, pred_texts, t, ignore) for t in iou_thresholds},
        "cer": (sum(errors.values()), len(truth)),
        "cer_ci": cer_counts(truth.casefold(), read.casefold()),
        "cer_nospace": (sum(errors_ns.values()), len(truth_ns)),
        "cer_errors": errors,
        "cer_nospace_errors": errors_ns,
    }


def evaluate_ocr(
    predict: Callable[[list[np.ndarray]], Document],
    pages: EvalSet,
    iou_thresholds: Sequence[float] = (0.5, ALSO_IOU),
    batch_size: int = 4,
) -> dict[str, Any]:
    """Score an OCR predictor (pages -> :class:`Document`) on a page set.

    ``seconds`` and ``pages_per_s`` cover the predictor calls only (the set's image decoding is excluded,
    as in ``vision eval detection``). ``worst_pages`` lists the :data:`WORST_PAGES` pages with the most page
    CER errors, each with its error split: where to look first.
    """
    timed = TimedPages(pages, "OCR", batch_size)
    det = {t: Counts() for t in iou_thresholds}
    e2e = {t: Counts() for t in iou_thresholds}
    dist = length = dist_ci = dist_ns = length_ns = 0
    errors = {"missing": 0, "extra": 0, "wrong": 0}
    errors_ns = dict(errors)
    per_page: list[dict[str, Any]] = []
    for chunk, images, doc in timed.predict(predict):
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
            dist_ci += scores["cer_ci"][0]
            dist_ns, length_ns = dist_ns + scores["cer_nospace"][0], length_ns + scores["cer_nospace"][1]
            for kind in errors:
                errors[kind] += scores["cer_errors"][kind]
                errors_ns[kind] += scores["cer_nospace_errors"][kind]
            per_page.append({"id": sample.id, "errors": int(scores["cer"][0]), "chars": int(scores["cer"][1]),
                             **scores["cer_errors"]})
    return {
        **timed.report(),
        "detection": {str(t): c.summary() for t, c in det.items()},
        "end_to_end": {str(t): c.summary() for t, c in e2e.items()},
        "cer": round(dist / length, 4) if length else None,
        "cer_ci": round(dist_ci / length, 4) if length else None,
        "cer_counts": {"errors": int(dist), "errors_ci": int(dist_ci), "chars": int(length), **errors},
        # every whitespace removed from both texts (the README's page CER of sets transcribed without spaces)
        "cer_nospace": round(dist_ns / length_ns, 4) if length_ns else None,
        "cer_nospace_counts": {"errors": int(dist_ns), "chars": int(length_ns), **errors_ns},
        "worst_pages": sorted(per_page, key=lambda r: -r["errors"])[:WORST_PAGES],
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``vision eval ocr``."""
    add_page_set_arguments(parser)
    add_model_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Score the OCR predictor on ``--data`` and print the scores (or JSON with ``--json``)."""
    pages = open_set(args.data, limit=args.limit)
    from vision.pipelines.ocr.predictor import ocr_predictor

    predictor = ocr_predictor(options=options_from_args(args, pages_per_batch=args.batch_size))
    report = evaluate_ocr(predictor, pages, (0.5, ALSO_IOU), batch_size=args.batch_size)
    report.update(det_arch=args.det_arch or "default", reco_arch=args.reco_arch or "default",
                  lang=args.lang or "default")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{report['set']}: {report['pages']} pages, {report['pages_per_s']} pages/s, page CER {report['cer']} "
        f"(case-insensitive {report['cer_ci']}, without spaces {report['cer_nospace']})"
    )
    c, n = report["cer_counts"], report["cer_nospace_counts"]
    print(f"  page CER errors (text not found / invented / misread): {c['missing']} missing, {c['extra']} extra, "
          f"{c['wrong']} wrong of {c['chars']} characters; without spaces {n['missing']} / {n['extra']} / "
          f"{n['wrong']} of {n['chars']}")
    worst = ", ".join(f"{r['id']} ({r['errors']})" for r in report["worst_pages"][:3])
    print(f"  most page CER errors: {worst}")
    for name in ("detection", "end_to_end"):
        for t, s in report[name].items():
            print(f"  {name:<10} IoU>={t}: {format_counts(s)}")
    return 0
