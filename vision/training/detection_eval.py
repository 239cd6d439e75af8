"""Validation of a detector during training: held-out rendered PDF pages, F1 at IoU 0.5 against our own
labels, and sweeps of the post-processing settings that calibrate them (the shipped settings come from here,
never from the evaluation sets): :func:`calibrate` on PDF pages, :func:`calibrate_scenes` on synthetic
photos drawn with held-out seeds."""

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
from vision.ops.db_postprocess import DBOptions, db_postprocess
from vision.predictors.detection.predictor import DetectionPredictor, fit_page, pick_shape
from vision.training.detection_data import DataConfig, scene_validation_pages, validation_pages

__all__ = ["BIN_SWEEP", "UNCLIP_SWEEP", "calibrate", "calibrate_scenes", "score_pages", "validate"]

UNCLIP_SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
BIN_SWEEP = (0.2, 0.3, 0.4)
_PAGES: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []  # (prob map, truth, ignore), for workers


def _score(params: DBOptions) -> Counts:
    total = Counts()
    for prob, boxes, ignore in _PAGES:
        h, w = prob.shape
        pred = db_postprocess(prob, params).boxes.astype(np.float64) * np.array([w, h, w, h])
        total = total + detection_counts(boxes, pred, 0.5, ignore)
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
    model: DBNet, data: DataConfig, device: torch.device, limit: int | None, label_pad: float,
    pages: list[tuple[np.ndarray, ...]] | None = None,
) -> int:
    """Fill :data:`_PAGES` with probability maps of the held-out pages (``pages``: ``(image, boxes[,
    ignore])`` in pixels; default :func:`validation_pages`) and their label boxes, padded by ``label_pad``."""
    global _PAGES
    pages = (validation_pages(data) if pages is None else pages)[:limit]
    pred = DetectionPredictor(
        DBProbability(model).eval(), mean=model.config.mean, std=model.config.std, device=device
    )
    _PAGES = []
    for image, boxes, *rest in pages:
        canvas, (h, w) = fit_page(image, pick_shape(*image.shape[:2]))
        prob = pred.probabilities(canvas[None])[0, :h, :w]
        scale = np.array([w / image.shape[1], h / image.shape[0]] * 2)
        truth = np.asarray(boxes, np.float64).reshape(-1, 4) * scale
        ignore = np.asarray(rest[0], np.float64).reshape(-1, 4) * scale if rest else None
        _PAGES.append((prob, truth + np.array([-label_pad, -label_pad, label_pad, label_pad]), ignore))
    return len(pages)


def score_pages(
    model: DBNet, pages: list[tuple[np.ndarray, ...]], params: DBOptions, device: torch.device | None = None
) -> Counts:
    """Detection counts (IoU 0.5) of ``model`` with ``params`` on ``pages``: ``(image, boxes[, ignore])`` in
    pixels, labels as given (no padding)."""
    _load_pages(model, DataConfig(), device or torch.device("cpu"), None, 0.0, pages)
    return _score(params)


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


def calibrate_scenes(
    model: DBNet,
    data: DataConfig,
    device: torch.device,
    *,
    pages: int = 150,
    seed: int = 4321,
    bin_thresh: tuple[float, ...] = (0.2, 0.3, 0.4),
    box_thresh: tuple[float, ...] = (0.4, 0.5, 0.6, 0.7),
    unclip: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.8),
    pad: tuple[float, ...] = (0, 2),
    budget_s: float = 1200.0,
) -> dict[str, Any]:
    """Post-processing for photos, chosen on ``pages`` synthetic photos of held-out seeds
    (:func:`~vision.training.detection_data.scene_validation_pages`, labels: boxes around the word quads,
    illegible words ignored): the grid ``bin_thresh x box_thresh x unclip`` at ``pad`` 0, then every ``pad``
    at the best of it. Returns ``{"pages", "best", "sweep"}`` (rows as in :func:`validate`)."""
    deadline = time.time() + budget_s
    n = _load_pages(model, data, device, None, 0.0, scene_validation_pages(data, pages, seed))
    rows = _sweep([DBOptions(bin_thresh=b, box_thresh=t, unclip_ratio=u)
                   for b in bin_thresh for t in box_thresh for u in unclip], deadline)
    if rows:
        top = max(rows, key=lambda r: r["f1"])
        rows += _sweep([DBOptions(bin_thresh=top["bin_thresh"], box_thresh=top["box_thresh"],
                                  unclip_ratio=top["unclip_ratio"], pad=p) for p in pad if p != 0], deadline)
    return {
        "pages": n,
        "seed": seed,
        "best": max(rows, key=lambda r: r["f1"]) if rows else None,
        "sweep": sorted(rows, key=lambda r: (r["bin_thresh"], r["box_thresh"], r["unclip_ratio"], r["pad"])),
    }
