"""Host (CPU) time per page of each OCR stage, model forward passes excluded.

    python benchmarks/host_stages.py [--pages 16] [--repeat 3] [--paths device,host] [--out FILE]

Runs the OCR pipeline stage by stage on ``--pages`` letter pages (``gpu_throughput.letter_pages``: the
sample invoice at 150 dpi, 155 words) on the CPU, for the ``device`` path (``crops_on_device=True``, what
GPU runs use, here with ``device="cpu"``) and the ``host`` path (numpy crops). Both models are wrapped by a
timer and their forward time is subtracted from the stage that called them, so each row is the host work
around the models: detection pre-processing (resize, pad, normalise) and post-processing (probability map
to boxes), crops and recognition bookkeeping (crop cutting, bucketing, paper fill, CTC decoding), layout
and ``Page`` building. Two detection sub-rows time ``fit_page`` + normalisation and ``db_postprocess`` alone
on the same maps. ``aten ops/page`` counts the torch operations issued outside the models (each is a
kernel launch, and ``nonzero``/``item`` a device sync, when the pipeline runs on a GPU).

Best of ``--repeat`` runs per row; single-threaded torch (as each ``gpu_throughput.py`` worker runs).
Prints a table; writes JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from gpu_throughput import letter_pages

SYNC_OPS = ("aten::nonzero", "aten::_local_scalar_dense", "aten::index")


class _OpCounter(TorchDispatchMode):
    """Counts aten operations while ``enabled`` (switched off around model calls)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.enabled = True

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if self.enabled:
            self.counts[func._schema.name] += 1  # "aten::nonzero", overloads merged
        return func(*args, **(kwargs or {}))


class _Timed:
    """A model callable that adds its wall time to ``clock[0]`` and pauses the op counter while it runs."""

    def __init__(self, model: Callable, clock: list[float], counter: list[_OpCounter | None]) -> None:
        self.model, self.clock, self.counter = model, clock, counter

    def __call__(self, x: Any) -> Any:
        mode = self.counter[0]
        if mode is not None:
            mode.enabled = False
        t0 = time.perf_counter()
        out = self.model(x)
        self.clock[0] += time.perf_counter() - t0
        if mode is not None:
            mode.enabled = True
        return out


def build(path: str, args: argparse.Namespace) -> tuple[Any, list[float], list[_OpCounter | None], Any]:
    """The OCR predictor of one path with timed models; returns it, the model clock, the counter slot and
    the detection predictor."""
    from vision.predictors.detection.predictor import detection_predictor
    from vision.predictors.recognition.predictor import recognition_predictor
    from vision.pipelines.ocr.predictor import ocr_predictor

    weights = None if args.random_weights else "default"
    det = detection_predictor(weights=weights, device="cpu", batch_size=args.det_batch_size)
    reco = recognition_predictor(weights=weights, device="cpu", batch_size=args.reco_batch_size)
    clock, counter = [0.0], [None]
    det.model, reco.model = _Timed(det.model, clock, counter), _Timed(reco.model, clock, counter)
    ocr = ocr_predictor(det_predictor=det, reco_predictor=reco, crops_on_device=path == "device",
                        pages_per_batch=args.pages)
    return ocr, clock, counter, det


def run_stages(ocr: Any, clock: list[float], pages: list[np.ndarray]) -> dict[str, float]:
    """Host seconds of each stage (stage wall time minus model time) over one batch of ``pages``."""
    from vision.pipelines.base import as_pages

    batch: Any = list(as_pages(pages))
    out: dict[str, float] = {}
    for name in ocr.pipeline.names:
        clock[0] = 0.0
        t0 = time.perf_counter()
        batch = ocr.pipeline[name](batch)
        out[name] = time.perf_counter() - t0 - clock[0]
    return out


def detection_parts(det: Any, pages: list[np.ndarray]) -> dict[str, float]:
    """Seconds of ``fit_page`` + normalisation, and of ``db_postprocess``, over ``pages`` (maps computed once)."""
    from vision.predictors.detection.predictor import fit_page, pick_shape
    from vision.ops.db_postprocess import db_postprocess

    t0 = time.perf_counter()
    fitted = [fit_page(p, pick_shape(*p.shape[:2], det.shapes)) for p in pages]
    for canvas, _ in fitted:
        det.preprocess(canvas[None])
    prep = time.perf_counter() - t0
    maps = [det.probabilities(c[None])[0][:h, :w] for c, (h, w) in fitted]
    t0 = time.perf_counter()
    for prob in maps:
        db_postprocess(prob, det.params, straight=det.straight)
    return {"detect: fit + normalise": prep, "detect: db_postprocess": time.perf_counter() - t0}


def measure(path: str, pages: list[np.ndarray], args: argparse.Namespace) -> dict[str, Any]:
    """Best-of-``repeat`` host ms/page per stage of one path, plus aten op counts per page."""
    ocr, clock, counter, det = build(path, args)
    run_stages(ocr, clock, pages[: min(2, len(pages))])  # warm-up (ONNX sessions, allocator)
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, sec in {**run_stages(ocr, clock, pages), **detection_parts(det, pages)}.items():
            best[name] = min(best.get(name, float("inf")), sec)
    mode = _OpCounter()
    counter[0] = mode
    with mode:
        run_stages(ocr, clock, pages)
    counter[0] = None
    n = len(pages)
    stage_names = ocr.pipeline.names
    return {
        "path": path,
        "ms_per_page": {k: round(v * 1e3 / n, 2) for k, v in best.items()},
        "total_ms_per_page": round(sum(best[k] for k in stage_names) * 1e3 / n, 2),
        "aten_ops_per_page": round(sum(mode.counts.values()) / n, 1),
        "sync_ops_per_page": {k: round(mode.counts[k] / n, 1) for k in SYNC_OPS},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=16, help="pages in the one batch that is timed")
    parser.add_argument("--repeat", type=int, default=3, help="runs per path; each row keeps its best")
    parser.add_argument("--paths", default="device,host", help="comma list of device, host")
    parser.add_argument("--det-batch-size", type=int, default=4)
    parser.add_argument("--reco-batch-size", type=int, default=256)
    parser.add_argument("--random-weights", action="store_true", help="dry run without the shipped weights")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(os.environ.get("OUT", REPO / "benchmarks" / "results")) / "host_stages.json",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    pages = letter_pages(args.pages, seed=0)
    rows = [measure(p.strip(), pages, args) for p in args.paths.split(",") if p.strip()]
    report = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
        f"torch {torch.__version__}",
        "page": "1275x1650 (letter, 150 dpi), 155 words",
        "pages": args.pages,
        "weights": "random" if args.random_weights else "default",
        "rows": rows,
    }
    print(report["machine"])
    for row in rows:
        print(f"\npath={row['path']}  host ms/page (model forward excluded)")
        for name, ms in row["ms_per_page"].items():
            print(f"  {name:<28} {ms:>8.2f}")
        print(f"  {'total (stages)':<28} {row['total_ms_per_page']:>8.2f}")
        print(f"  aten ops/page outside the models: {row['aten_ops_per_page']}  {row['sync_ops_per_page']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
