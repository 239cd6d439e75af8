"""Shared by the page-set scorers (``vision eval detection`` and ``vision eval ocr``).

The timed batch loop over a page set with its report head (pages and pages/s), the printed form of a
P/R/F1 summary and the options every page-set task takes.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from vision.evaluation.data import EvalSet, PageSample

__all__ = ["ALSO_IOU", "TimedPages", "add_page_set_arguments", "format_counts"]

ALSO_IOU = 0.3  # README: report F1 at 0.3 beside 0.5 to tell box-convention misses from real ones


class TimedPages:
    """One timed pass over a page set: its pages decoded a batch at a time, and the time spent predicting.

    Attributes:
        samples: the set's pages, in order; seconds: time spent inside ``predict`` so far (image decoding
        stays out of it, so the reported speed is the predictor's).
    """

    def __init__(self, pages: EvalSet, task: str, batch_size: int) -> None:
        """Raises ``ValueError`` (naming ``task``) when ``pages`` is not a page set."""
        if pages.kind != "page":
            raise ValueError(f"{pages.name} is a {pages.kind} set; {task} needs a page set")
        self.name = pages.name
        self.samples: list[PageSample] = list(pages)  # type: ignore[arg-type]
        self.batch_size = batch_size
        self.seconds = 0.0

    def predict(
        self, predict: Callable[[list[np.ndarray]], Any]
    ) -> Iterator[tuple[list[PageSample], list[np.ndarray], Any]]:
        """Yield ``(samples, images uint8[H, W, 3], predict(images))`` per batch, timing each call."""
        for start in range(0, len(self.samples), self.batch_size):
            chunk = self.samples[start : start + self.batch_size]
            images = [s.load_image() for s in chunk]
            t0 = time.perf_counter()
            results = predict(images)
            self.seconds += time.perf_counter() - t0
            yield chunk, images, results

    def report(self) -> dict[str, Any]:
        """The head of a report: ``{"set", "pages", "seconds", "pages_per_s"}`` (None without time)."""
        pages, seconds = len(self.samples), self.seconds
        return {
            "set": self.name,
            "pages": pages,
            "seconds": round(seconds, 3),
            "pages_per_s": round(pages / seconds, 3) if seconds else None,
        }


def format_counts(s: dict[str, Any]) -> str:
    """A :meth:`Counts.summary <vision.evaluation.metrics.Counts.summary>` as the page-set tasks print it."""
    return (
        f"precision {s['precision']:.4f}  recall {s['recall']:.4f}  F1 {s['f1']:.4f}"
        f"  ({s['tp']} matched / {s['n_pred']} predicted / {s['n_gt']} ground truth)"
    )


def add_page_set_arguments(parser: argparse.ArgumentParser) -> None:
    """``--data``, ``--json``, ``--limit`` and ``--batch-size``: the options of every page-set task."""
    parser.add_argument("--data", required=True, help="a page set folder (holding index.json)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N pages")
    parser.add_argument("--batch-size", type=int, default=4, help="pages per predictor call")
