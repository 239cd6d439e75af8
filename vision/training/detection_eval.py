"""Validation of a detector during training: held-out rendered PDF pages, F1 at IoU 0.5 against our own
labels, and a sweep of the post-processing thresholds that calibrates ``unclip_ratio`` (the shipped default
comes from here, never from the evaluation sets)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import torch

from vision.evaluation.metrics import Counts, detection_counts
from vision.models.detection.dbnet import DBNet, DBProbability
from vision.models.detection.predictor import DetectionPredictor, fit_page, pick_shape
from vision.ops.db_postprocess import DBParams, db_postprocess
from vision.training.detection_data import DataConfig, validation_pages

__all__ = ["validate", "SWEEP"]

SWEEP = {"unclip_ratio": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8), "bin_thresh": (0.2, 0.3, 0.4), "box_thresh": (0.5,)}


def _score(probs: list[np.ndarray], truths: list[np.ndarray], params: DBParams) -> Counts:
    total = Counts()
    for prob, boxes in zip(probs, truths):
        h, w = prob.shape
        pred = db_postprocess(prob, params).boxes.astype(np.float64) * np.array([w, h, w, h])
        total = total + detection_counts(boxes, pred, 0.5)
    return total


@torch.inference_mode()
def validate(model: DBNet, data: DataConfig, device: torch.device, limit: int | None = None) -> dict[str, Any]:
    """F1 of ``model`` on held-out pages for every post-processing setting in :data:`SWEEP`.

    Returns ``{"pages", "default": {...}, "best": {"params", "f1", ...}, "sweep": [...]}``.
    """
    pages = validation_pages(data)[:limit]
    if not pages:
        return {"pages": 0}
    prob_model = DBProbability(model).eval()
    pred = DetectionPredictor(prob_model, mean=model.config.mean, std=model.config.std, device=device)
    probs, truths = [], []
    for image, boxes in pages:
        canvas, (h, w) = fit_page(image, pick_shape(*image.shape[:2]))
        probs.append(pred.probabilities(canvas[None])[0, :h, :w])
        truths.append(np.asarray(boxes, np.float64) * np.array([w / image.shape[1], h / image.shape[0]] * 2))
    rows = []
    for values in itertools.product(*SWEEP.values()):
        params = DBParams(**dict(zip(SWEEP, values)))
        c = _score(probs, truths, params)
        rows.append({**dict(zip(SWEEP, values)), "precision": round(c.precision, 4), "recall": round(c.recall, 4),
                     "f1": round(c.f1, 4)})
    default = next(r for r in rows if all(r[k] == getattr(DBParams(), k) for k in SWEEP))
    best = max(rows, key=lambda r: r["f1"])
    return {"pages": len(pages), "default": default, "best": best, "sweep": rows}
