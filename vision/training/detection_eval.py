"""Validation of a detector during training: held-out rendered PDF pages, F1 at IoU 0.5 against our own
labels, and a sweep of the post-processing thresholds that calibrates ``unclip_ratio`` (the shipped default
comes from here, never from the evaluation sets)."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor, wait
from typing import Any

import numpy as np
import torch

from vision.evaluation.metrics import Counts, detection_counts
from vision.models.detection.dbnet import DBNet, DBProbability
from vision.predictors.detection.predictor import DetectionPredictor, fit_page, pick_shape
from vision.ops.db_postprocess import DBOptions, db_postprocess
from vision.training.detection_data import DataConfig, validation_pages

__all__ = ["validate", "calibrate", "UNCLIP_SWEEP", "BIN_SWEEP"]

UNCLIP_SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
BIN_SWEEP = (0.2, 0.3, 0.4)
_PAGES: list[tuple[np.ndarray, np.ndarray]] = []  # (prob map, truth boxes) shared with forked workers


def _score(params: DBOptions) -> Counts:
    total = Counts()
    for prob, boxes in _PAGES:
        h, w = prob.shape
        pred = db_postprocess(prob, params).boxes.astype(np.float64) * np.array([w, h, w, h])
        total = total + detection_counts(boxes, pred, 0.5)
    return total


def _row(params: DBOptions, c: Counts) -> dict[str, Any]:
    return {
        "unclip_ratio": params.unclip_ratio,
        "pad": params.pad,
        "bin_thresh": params.bin_thresh,
        "box_thresh": params.box_thresh,
        "precision": round(c.precision, 4),
        "recall": round(c.recall, 4),
        "f1": round(c.f1, 4),
    }


def _sweep(settings: list[DBOptions], deadline: float) -> list[dict[str, Any]]:
    """Score every setting in forked worker processes; settings unfinished at ``deadline`` are left out."""
    workers = max(1, min(len(settings), (os.cpu_count() or 2) - 1))
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
        futures = {pool.submit(_score, p): p for p in settings}
        done, pending = wait(futures, timeout=max(deadline - time.time(), 1.0))
        for f in pending:
            f.cancel()
        return [_row(futures[f], f.result()) for f in done if f.exception() is None]


@torch.inference_mode()
def _load_pages(
    model: DBNet, data: DataConfig, device: torch.device, limit: int | None, label_pad: float
) -> int:
    """Fill :data:`_PAGES` with probability maps of the held-out pages and their (padded) label boxes."""
    global _PAGES
    pages = validation_pages(data)[:limit]
    pred = DetectionPredictor(
        DBProbability(model).eval(), mean=model.config.mean, std=model.config.std, device=device
    )
    _PAGES = []
    for image, boxes in pages:
        canvas, (h, w) = fit_page(image, pick_shape(*image.shape[:2]))
        prob = pred.probabilities(canvas[None])[0, :h, :w]
        truth = np.asarray(boxes, np.float64) * np.array([w / image.shape[1], h / image.shape[0]] * 2)
        _PAGES.append((prob, truth + np.array([-label_pad, -label_pad, label_pad, label_pad])))
    return len(pages)


def validate(
    model: DBNet,
    data: DataConfig,
    device: torch.device,
    limit: int | None = None,
    budget_s: float = 90.0,
    label_pad: float = 0.0,
) -> dict[str, Any]:
    """F1 of ``model`` on held-out pages: every ``unclip_ratio`` in :data:`UNCLIP_SWEEP` at the default
    binarization threshold, then every threshold in :data:`BIN_SWEEP` at the best ratio.

    Args:
        label_pad: pixels added around every label box (to score against a padded box convention).

    Returns ``{"pages", "default": row, "best": row, "sweep": [rows]}``, rows holding the settings and
    precision/recall/F1; stops sweeping after ``budget_s`` seconds.
    """
    deadline = time.time() + budget_s
    n = _load_pages(model, data, device, limit, label_pad)
    if not n:
        return {"pages": 0}
    base = DBOptions()
    rows = _sweep([DBOptions(unclip_ratio=u, bin_thresh=base.bin_thresh) for u in UNCLIP_SWEEP], deadline)
    best_u = max(rows, key=lambda r: r["f1"])["unclip_ratio"] if rows else base.unclip_ratio
    rows += _sweep(
        [DBOptions(unclip_ratio=best_u, bin_thresh=b) for b in BIN_SWEEP if b != base.bin_thresh], deadline
    )
    default = next(
        (r for r in rows if r["unclip_ratio"] == base.unclip_ratio and r["bin_thresh"] == base.bin_thresh),
        None,
    )
    return {
        "pages": n,
        "label_pad": label_pad,
        "default": default,
        "best": max(rows, key=lambda r: r["f1"]) if rows else None,
        "sweep": rows,
    }


def calibrate(
    model: DBNet,
    data: DataConfig,
    device: torch.device,
    *,
    label_pad: float,
    unclip: tuple[float, ...] = (0.3, 0.4, 0.5),
    pad: tuple[float, ...] = (0, 1, 2, 3, 4),
    budget_s: float = 600.0,
) -> dict[str, Any]:
    """Grid of ``unclip_ratio`` x ``pad`` scored against labels padded by ``label_pad`` pixels.

    This is how the shipped post-processing is chosen for a box convention (e.g. "padded a few pixels
    around the ink") on our own held-out pages; see docs/models/detection.md.
    """
    deadline = time.time() + budget_s
    n = _load_pages(model, data, device, None, label_pad)
    rows = _sweep([DBOptions(unclip_ratio=u, pad=p) for u in unclip for p in pad], deadline)
    return {
        "pages": n,
        "label_pad": label_pad,
        "best": max(rows, key=lambda r: r["f1"]) if rows else None,
        "sweep": sorted(rows, key=lambda r: (r["unclip_ratio"], r["pad"])),
    }
