"""Profile of one OCR call on the GPU: how busy the GPU is, and how often the host waits for it.

    python benchmarks/gpu_profile.py [--rung bf16+compile] [--pages 64] [--trace trace.json.gz] [--out FILE]

Builds the predictor of a ``gpu_throughput.py`` rung, warms it up (compilation excluded), then records one
call on ``--pages`` letter pages with ``torch.profiler`` (CPU + CUDA activities). Reports the wall time, the
GPU busy time (union of kernel and copy intervals) and idle share, the host-device synchronisations
(``cudaStreamSynchronize`` / ``cudaDeviceSynchronize`` / device-to-host copies), and the top host and device
operations by self time. ``--device cpu`` checks the script without a GPU (no device rows then). Writes a
JSON summary and, with ``--trace``, the Chrome trace (open in Perfetto).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpu_throughput import build_predictor, letter_pages

SYNC_NAMES = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")


def busy_us(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of ``(start, end)`` intervals (microseconds)."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def summarize(prof: Any, wall_s: float, top: int = 12) -> dict[str, Any]:
    """GPU busy/idle, synchronisations and the heaviest operations of a finished profile."""
    events = prof.events()
    device = [(e.time_range.start, e.time_range.end) for e in events if e.device_type == DeviceType.CUDA]
    names = [e.name for e in events]
    averages = prof.key_averages()
    host = sorted(averages, key=lambda a: a.self_cpu_time_total, reverse=True)[:top]
    kernels = sorted(averages, key=lambda a: getattr(a, "self_device_time_total", 0.0), reverse=True)[:top]
    busy = busy_us(device) / 1e6
    return {
        "wall_s": round(wall_s, 4),
        "gpu_busy_s": round(busy, 4),
        "gpu_idle_share": round(1 - busy / wall_s, 4) if device else None,
        "syncs": {n: names.count(n) for n in SYNC_NAMES},
        "device_to_host_copies": sum("DtoH" in n or "Device -> Pageable" in n or "Device -> Pinned" in n for n in names),
        "top_host_ops_ms": [(a.key, round(a.self_cpu_time_total / 1e3, 2), a.count) for a in host],
        "top_device_ops_ms": [(a.key, round(getattr(a, "self_device_time_total", 0.0) / 1e3, 2), a.count)
                              for a in kernels if getattr(a, "self_device_time_total", 0.0) > 0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rung", default="bf16+compile", help="a gpu_throughput.py rung: fp32, bf16, bf16+compile")
    parser.add_argument("--pages", type=int, default=64)
    parser.add_argument("--pages-per-batch", type=int, default=32)
    parser.add_argument("--det-batch-size", type=int, default=16)
    parser.add_argument("--reco-batch-size", type=int, default=1024)
    parser.add_argument("--min-rows", type=int, default=64, help="see gpu_throughput.py")
    parser.add_argument("--det-arch", default=None)
    parser.add_argument("--reco-arch", default=None)
    parser.add_argument("--random-weights", action="store_true")
    parser.add_argument("--nchw", action="store_true", help="keep the models' convolutions NCHW")
    parser.add_argument("--page-resize", choices=("host", "device"), default=None,
                        help="where pages are fitted to the detector's input (see gpu_throughput.py)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--trace", type=Path, default=None, help="write the Chrome trace here (.json or .json.gz)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/gpu_profile.json"))
    args = parser.parse_args(argv)
    cuda = args.device.startswith("cuda")
    predictor = build_predictor(args.rung, args)
    pages = letter_pages(args.pages)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    predictor(pages)  # warm-up on the profiled pages: compilation and cuDNN plans for every batch shape
    predictor(pages)
    sync()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        t0 = time.perf_counter()
        predictor(pages)
        sync()
        wall = time.perf_counter() - t0
    summary = {"device": torch.cuda.get_device_name() if cuda else "cpu", "torch": torch.__version__,
               "rung": args.rung, "pages": args.pages, "pages_per_s": round(args.pages / wall, 2),
               **summarize(prof, wall)}
    if args.trace:
        raw = args.trace.with_suffix("") if args.trace.suffix == ".gz" else args.trace
        prof.export_chrome_trace(str(raw))
        if args.trace.suffix == ".gz":
            with raw.open("rb") as src, gzip.open(args.trace, "wb") as dst:
                shutil.copyfileobj(src, dst)
            raw.unlink()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if not k.startswith("top_")}, indent=1))
    for title, key in (("host ops (self ms, calls)", "top_host_ops_ms"), ("device ops (self ms, calls)", "top_device_ops_ms")):
        print(f"\n{title}")
        for name, ms, count in summary[key]:
            print(f"  {ms:10.2f}  {count:6d}  {name[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
