"""Per-shape cliffs: time every call of the public API on pages and crops it has never seen.

    python benchmarks/shape_cliffs.py --device cuda                         # 200 pages, 200 crop calls
    python benchmarks/shape_cliffs.py --device cuda --pages-from .carry/pages
    python benchmarks/shape_cliffs.py --quick                               # 20 + 20 calls, any device

Two streams, one call each, through ``vision.ocr_predictor`` / ``vision.recognition_predictor`` with the
device's default settings (on CUDA: bf16 eager; ``--precision``/``--compile`` to change them):

* ``pages``: ``--calls`` page images, each of its own size (variants of the source pages: scaled, cropped,
  shifted; ``benchmarks/_pages.py``), ``--pages-per-call`` pages per call;
* ``crops``: ``--calls`` calls of word crops of new widths each (1-16 crops of 8-900 px wide, with long
  lines split by the recognizer and tall crops read turned), through the recognizer alone.

Every call is timed (``torch.cuda.synchronize()`` before each clock read). Reported per stream: the first
call, the median / p90 / max of the rest, ``cliffs`` (calls after the first ``--warmup`` that take more than
3x the median), and the time of the warm-up. A per-shape cost shows as a max far above the median and a
long tail of cliffs. Prints JSON (and writes it to ``--out`` when given).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _summary(times: list[float], warmup: int) -> dict:
    rest = np.array(times[1:]) if len(times) > 1 else np.array(times)
    after = np.array(times[warmup:]) if len(times) > warmup else rest
    median = float(np.median(after))
    return {
        "calls": len(times),
        "first_s": round(times[0], 4),
        "warmup_s": round(float(sum(times[:warmup])), 3),
        "median_s": round(float(np.median(rest)), 4),
        "p90_s": round(float(np.percentile(rest, 90)), 4),
        "max_s": round(float(rest.max()), 4),
        "median_after_warmup_s": round(median, 4),
        "max_after_warmup_s": round(float(after.max()), 4),
        "cliffs": int((after > 3 * median).sum()),
        "times_s": [round(t, 4) for t in times],
    }


def crop_stream(calls: int, seed: int = 1) -> list[list[np.ndarray]]:
    """``calls`` lists of 1-16 crops: dark strokes on paper, widths 8-900 px, heights 10-60 px, some tall."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(calls):
        crops = []
        for _ in range(int(rng.integers(1, 17))):
            h = int(rng.integers(10, 61))
            w = int(rng.integers(8, 901)) if rng.random() > 0.15 else max(4, h // 3)  # tall: vertical text
            crop = np.full((h, w, 3), 245, np.uint8)
            for x in range(2, w - 2, int(rng.integers(3, 9))):
                crop[h // 4: 3 * h // 4, x:x + 1 + int(rng.integers(0, 2))] = int(rng.integers(0, 80))
            crops.append(crop)
        out.append(crops)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cuda, cpu (default: CUDA when available)")
    parser.add_argument("--calls", type=int, default=200, help="calls per stream (each of new shapes)")
    parser.add_argument("--pages-per-call", type=int, default=1)
    parser.add_argument("--pages-from", "--sources", dest="sources", type=Path, action="append", default=None,
                        help="folder of source page images (default: the bundled sample page)")
    parser.add_argument("--warmup", type=int, default=None, help="calls counted as warm-up (default 10%%)")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default=None)
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--quick", action="store_true", help="20 calls per stream")
    parser.add_argument("--random-weights", action="store_true", help="check the script without weights")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.calls = min(args.calls, 20)
    warmup = args.warmup if args.warmup is not None else max(1, args.calls // 10)

    import torch
    from _pages import source_pages, variants

    import vision
    from vision.pipelines.ocr.options import OCROptions
    from vision.pipelines.ocr.predictor import gpu_defaults

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    settings = {"device": device}
    if args.precision:
        settings["dtype"] = torch.bfloat16 if args.precision == "bf16" else torch.float32
    if args.compile is not None:
        settings["compile"] = args.compile
    weights = None if args.random_weights else "default"
    t0 = time.perf_counter()
    ocr = vision.ocr_predictor(det_weights=weights, reco_weights=weights, **settings)
    build_s = time.perf_counter() - t0
    dtype, compiled = gpu_defaults(OCROptions(**settings))

    pages = list(variants(source_pages(args.sources), args.calls * args.pages_per_call, seed=0))
    page_times = []
    for i in range(args.calls):
        batch = pages[i * args.pages_per_call:(i + 1) * args.pages_per_call]
        _sync(device)
        t = time.perf_counter()
        ocr(batch)
        _sync(device)
        page_times.append(time.perf_counter() - t)

    reco = ocr.pipeline["recognize"].predictor
    crop_times = []
    for crops in crop_stream(args.calls):
        _sync(device)
        t = time.perf_counter()
        reco(crops)
        _sync(device)
        crop_times.append(time.perf_counter() - t)

    name = torch.cuda.get_device_name() if device.startswith("cuda") else "CPU"
    report = {
        "benchmark": "shape_cliffs",
        "machine": f"{name}, {os.cpu_count()} CPU cores, torch {torch.__version__}",
        "device": device,
        "dtype": str(dtype).replace("torch.", ""),
        "compile": compiled,
        "build_s": round(build_s, 2),
        "distinct_page_sizes": len({p.shape for p in pages}),
        "pages": _summary(page_times, warmup),
        "crops": _summary(crop_times, warmup),
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
