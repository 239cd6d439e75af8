"""What each model call costs on a GPU, per input shape: the first call of a shape against its repeats.

    python benchmarks/model_shapes.py [--device cuda] [--dtype bf16] [--repeats 4] [--out FILE]

For the shipped detector (every input shape of the predictor, at each padded row count of its CUDA batch size)
and recognizer (``--widths`` buckets at ``--reco-rows`` rows), on uint8 inputs already on the device: the host time of the call (until
the model has queued its work) and the wall time to ``torch.cuda.synchronize()``, for the first call of the
shape and the median of ``--repeats`` more. A first call far above the repeats is a per-shape cost (kernel
selection, plan building, allocator growth); a host time close to the wall time means the host, not the GPU,
sets the pace. ``--cudnn-benchmark`` turns cuDNN autotuning on, ``--no-cudnn`` cuDNN off and ``--channels-last``
overrides the predictors' memory format, to compare.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _time(call: Callable[[], Any], device: torch.device) -> tuple[float, float]:
    """(host ms until ``call`` returns, wall ms until the device is done)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t = time.perf_counter()
    call()
    host = time.perf_counter() - t
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return host * 1000, (time.perf_counter() - t) * 1000


def _rows(label: str, shapes: list[tuple[int, ...]], make: Callable[[tuple[int, ...]], Callable[[], Any]],
          repeats: int, device: torch.device) -> list[dict[str, Any]]:
    out = []
    for shape in shapes:
        call = make(shape)
        first = _time(call, device)
        again = [_time(call, device) for _ in range(repeats)]
        row = {"model": label, "shape": list(shape), "first_host_ms": round(first[0], 2),
               "first_wall_ms": round(first[1], 2), "host_ms": round(median(a for a, _ in again), 2),
               "wall_ms": round(median(b for _, b in again), 2)}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--cudnn-benchmark", action="store_true")
    parser.add_argument("--no-cudnn", action="store_true", help="torch.backends.cudnn.enabled = False")
    parser.add_argument("--channels-last", default=None, choices=["on", "off"], help="default: the predictors'")
    parser.add_argument("--widths", default="32,64,96,128,160,256,384,512,800")
    parser.add_argument("--reco-rows", default="8,64,256,1024")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.backends.cudnn.benchmark = args.cudnn_benchmark
    torch.backends.cudnn.enabled = not args.no_cudnn
    nhwc = None if args.channels_last is None else args.channels_last == "on"
    from vision.predictors.detection.predictor import detection_predictor, padded_rows
    from vision.predictors.recognition.predictor import recognition_predictor

    device = torch.device(args.device)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    from vision.pipelines.ocr.predictor import GPU_SIZES

    det = detection_predictor(device=device, dtype=dtype, batch_size=GPU_SIZES["det_batch_size"],
                              channels_last=nhwc)
    reco = recognition_predictor(device=device, dtype=dtype, batch_size=GPU_SIZES["reco_batch_size"],
                                 channels_last=nhwc)

    def det_call(shape: tuple[int, ...]) -> Callable[[], Any]:
        rows, h, w = shape
        x = torch.randint(0, 256, (rows, h, w, 3), dtype=torch.uint8, device=device)
        return lambda: det.model(det.preprocess(x))

    def reco_call(shape: tuple[int, ...]) -> Callable[[], Any]:
        rows, w = shape
        x = torch.randint(0, 256, (rows, 3, 32, w), device=device).float()
        frames = np.full(rows, w // 4)
        return lambda: reco._run(x, frames)

    row_counts = sorted({padded_rows(n, det.batch_size) for n in range(1, det.batch_size + 1)})
    det_shapes = [(r, h, w) for (h, w) in det.shapes for r in row_counts]
    widths = [int(w) for w in args.widths.split(",")]
    reco_rows = [int(r) for r in args.reco_rows.split(",")]
    reco_shapes = [(r, w) for w in widths for r in reco_rows]
    with torch.inference_mode():
        rows = _rows("detector", det_shapes, det_call, args.repeats, device)
        rows += _rows("recognizer", reco_shapes, reco_call, args.repeats, device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    report = {"benchmark": "model_shapes", "machine": name, "torch": torch.__version__, "dtype": args.dtype,
              "cudnn_benchmark": args.cudnn_benchmark,
              "cudnn": not args.no_cudnn, "channels_last": args.channels_last or "default", "detector_batch_size": det.batch_size,
              "recognizer_pad_batches": reco.pad_batches, "rows": rows}
    for model in ("detector", "recognizer"):
        part = [r for r in rows if r["model"] == model]
        report[f"{model}_first_wall_ms_total"] = round(sum(r["first_wall_ms"] for r in part), 1)
        report[f"{model}_repeat_wall_ms_total"] = round(sum(r["wall_ms"] for r in part), 1)
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
