"""CPU cost of document structure: the OCR pipeline with and without column gutters, tables and block kinds.

Both predictors share the same detection and recognition predictors; pages alternate between them (A, B,
A, B, ...) so load on the machine hits both alike. Besides the whole pipeline, the ``layout`` and
``structure`` stages are timed on their own (wrapped timers). "Without" is the layout as it reads without
structure: ``LayoutOptions(gutter_width=0, regions=False)`` and ``StructureOptions(kinds=False, tables=False, figures=False)``.

    python benchmarks/structure_cost.py --data ../shared/data/funsd_dev --pages 20 --json out.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import vision
from vision.evaluation.data import open_set
from vision.pipelines.ocr.reading_order import LayoutOptions
from vision.pipelines.ocr.structure import StructureOptions


class _Timed:
    def __init__(self, stage: Callable[[Any], Any]) -> None:
        self.stage, self.seconds = stage, 0.0

    def __call__(self, batch: Any) -> Any:
        t0 = time.perf_counter()
        out = self.stage(batch)
        self.seconds += time.perf_counter() - t0
        return out


def _build(base: Any, with_structure: bool) -> tuple[Any, dict[str, _Timed]]:
    kwargs = {} if with_structure else {
        "layout": LayoutOptions(gutter_width=0, regions=False),
        "structure": StructureOptions(kinds=False, tables=False, figures=False),
    }
    predictor = vision.ocr_predictor(
        det_predictor=base.pipeline["detect"].predictor, reco_predictor=base.pipeline["recognize"].predictor, **kwargs
    )
    timers = {}
    for name in ("layout", "structure"):
        if name in predictor.pipeline.names:
            timers[name] = _Timed(predictor.pipeline[name])
            predictor.pipeline = predictor.pipeline.replace(name, timers[name])
    return predictor, timers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="a page set (funsd_dev)")
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    images = [s.load_image() for s in open_set(args.data, limit=args.pages)]
    base = vision.ocr_predictor(device="cpu")
    runs = {"without": _build(base, False), "with": _build(base, True)}
    total = {k: 0.0 for k in runs}
    base([images[0]])  # warm-up (onnxruntime sessions, caches)
    for image in images:
        for name, (predictor, _) in runs.items():
            t0 = time.perf_counter()
            predictor([image])
            total[name] += time.perf_counter() - t0
    n = len(images)
    report: dict[str, Any] = {
        "machine": f"{platform.node()} {platform.processor()} torch threads {torch.get_num_threads()}",
        "pages": n,
    }
    for name, (_, timers) in runs.items():
        report[name] = {"s_per_page": round(total[name] / n, 4)}
        report[name].update({f"{k}_s_per_page": round(t.seconds / n, 4) for k, t in timers.items()})
    stages = lambda r: sum(v for k, v in r.items() if k != "s_per_page")
    report["added_s_per_page_stages"] = round(stages(report["with"]) - stages(report["without"]), 4)
    report["added_s_per_page_total"] = round(report["with"]["s_per_page"] - report["without"]["s_per_page"], 4)
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
