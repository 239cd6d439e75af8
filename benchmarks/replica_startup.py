"""Where the start-up of N model replicas goes: each phase's seconds in every process, started together.

    python benchmarks/replica_startup.py [--replicas 12] [--device cuda] [--torch-path] [--start spawn|forkserver]
        [--pages DIR] [--out FILE]

Each of ``--replicas`` spawned processes stamps: interpreter up, ``import torch`` done, CUDA context made,
``vision`` imported, predictor built (both models on the device), first call on 4 pages, a second call on 4
other pages. Prints the median and max of each phase over the processes (JSON); what ``vision ocr`` and
``ocr_predictor(replicas=N)`` pay before their first page. ``--torch-path`` builds the predictor as a GPU
process does (torch models, crops cut on the device: ``OCROptions(onnx=False, crops_on_device=True)``) on any
device, so the CPU measures what a GPU replica imports and builds; without it a CPU process runs the CPU
default (cached ONNX exports). ``--start forkserver`` forks the processes from a server that imported torch
and the package once (``multiprocessing``'s forkserver with those modules preloaded) instead of spawning
fresh interpreters.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _replica(start: float, device: str, pages: list[str], queue: Any, torch_path: bool = False) -> None:
    stamps = {"spawned": time.time() - start}
    import torch

    stamps["import_torch"] = time.time() - start
    if device.startswith("cuda"):
        torch.cuda.init()
        torch.zeros(1, device=device)
    stamps["cuda_context"] = time.time() - start
    sys.path.insert(0, str(REPO))
    import numpy as np
    from PIL import Image

    import vision

    stamps["import_vision"] = time.time() - start
    torch.set_num_threads(1)
    if torch_path:
        from vision.pipelines.ocr.options import OCROptions

        predictor = vision.ocr_predictor(options=OCROptions(device=device, onnx=False, crops_on_device=True))
    else:
        predictor = vision.ocr_predictor(device=device)
    stamps["build"] = time.time() - start
    images = [np.asarray(Image.open(p).convert("RGB")) for p in pages]
    predictor(images[:4])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    stamps["first_call"] = time.time() - start
    predictor(images[4:8])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    stamps["second_call"] = time.time() - start
    queue.put(stamps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=12)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--pages", type=Path, default=REPO / ".carry" / "thru" / "funsd_dev" / "images")
    parser.add_argument("--torch-path", action="store_true", help="torch models and device crops on any device")
    parser.add_argument("--start", choices=("spawn", "forkserver"), default="spawn")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    files = sorted(str(p) for p in args.pages.iterdir())
    ctx = mp.get_context(args.start)
    if args.start == "forkserver":
        sys.path.insert(0, str(REPO))
        ctx.set_forkserver_preload(["torch", "vision", "vision.pipelines.ocr.predictor"])
    queue = ctx.Queue()
    start = time.time()
    procs = []
    for k in range(args.replicas):
        share = [files[(8 * k + i) % len(files)] for i in range(8)]
        procs.append(ctx.Process(target=_replica, args=(start, args.device, share, queue, args.torch_path)))
        procs[-1].start()
    stamps = [queue.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    phases = list(stamps[0])
    report: dict[str, Any] = {"benchmark": "replica_startup", "replicas": args.replicas, "device": args.device,
                              "torch_path": args.torch_path, "start": args.start,
                              "seconds_since_start": {ph: {"median": round(median(s[ph] for s in stamps), 2),
                                                           "max": round(max(s[ph] for s in stamps), 2)}
                                                      for ph in phases}}
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
