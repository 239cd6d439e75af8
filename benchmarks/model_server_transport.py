"""The model server's costs outside the models: a page's traffic, and a worker's CPU time per page.

    python benchmarks/model_server_transport.py [--rounds 60] [--pages DIR] [--out FILE]

A worker sends what a letter page costs the model server (the page, 1275 x 1650 x 3 uint8, and 1 MB of
packed crops) and gets back a probability map (1024 x 768) and logits (150 crops x 32 frames x 269 classes),
both bfloat16, the way :mod:`vision.predictors.remote` sends them (an :class:`~vision.predictors._arena.Arena`
per side, reused) against tensors put on a :mod:`torch.multiprocessing` queue as they are (each moved into a
shared-memory file of its own and mapped by the receiver; named files, ``file_system``). Prints the median
round trip and the server's part of it (from receiving the request to queuing its answer) over the rounds
after the first 10. With ``--pages DIR`` (page images, e.g. ``funsd_dev/images``) it also reads 24 of them
with the OCR pipeline in this process, its models in a model server on the CPU, in calls of 8 pages (the
first call a warm-up), torch and OpenCV on one thread each: this process's CPU time per page is what a
worker of ``vision ocr --model-server`` spends on a page (the server's time is not in it); the hosts' cores
divided by it bound such a run. Writes JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _answer_tensors() -> tuple[Any, Any]:
    import torch

    return torch.rand(1024, 768).to(torch.bfloat16), torch.rand(150, 32, 269).to(torch.bfloat16)


def _serve(mode: str, requests: Any, replies: Any) -> None:
    import torch
    import torch.multiprocessing as tmp

    from vision.predictors._arena import Arena, unpack

    tmp.set_sharing_strategy("file_system")
    torch.set_num_threads(1)
    arena, (probs, logits) = Arena(), _answer_tensors()
    while (request := requests.get()) is not None:
        start = time.perf_counter()
        if mode == "arena":
            pages = unpack(*request)
            float(pages[0][0, 0, 0])
            replies.put((*arena.pack((probs, logits)), time.perf_counter() - start))
        else:
            float(request[0][0, 0, 0])
            out = (probs.clone(), logits.clone())  # a fresh answer each time, as a model gives
            replies.put((out, None, time.perf_counter() - start))


def measure(mode: str, rounds: int) -> dict[str, float]:
    """Median round trip and server part (ms) of ``rounds`` page exchanges over ``mode`` (arena / queue)."""
    import torch
    import torch.multiprocessing as tmp

    from vision.predictors._arena import Arena, unpack

    tmp.set_sharing_strategy("file_system")
    ctx = tmp.get_context("spawn")
    requests, replies = ctx.Queue(), ctx.Queue()
    server = ctx.Process(target=_serve, args=(mode, requests, replies))
    server.start()
    rng = np.random.default_rng(0)
    page = rng.integers(0, 255, (1650, 1275, 3), dtype=np.uint8)
    crops = rng.integers(0, 255, 1_000_000, dtype=np.uint8)
    arena, trips, parts = Arena(), [], []
    for _ in range(rounds):
        start = time.perf_counter()
        if mode == "arena":
            requests.put(arena.pack([page, crops]))
            out, block, part = replies.get()
            probs, logits = unpack(out, block, copy=True)
        else:
            requests.put([torch.from_numpy(page.copy()), torch.from_numpy(crops.copy())])
            (probs, logits), _, part = replies.get()
        probs.float().numpy(), logits.float()
        trips.append(time.perf_counter() - start)
        parts.append(part)
    requests.put(None)
    server.join()
    return {"round_trip_ms": round(1000 * float(np.median(trips[10:])), 3),
            "server_ms": round(1000 * float(np.median(parts[10:])), 3)}


def worker_cpu(folder: Path, pages: int = 24, per_call: int = 8) -> dict[str, float]:
    """CPU ms per page of this process reading ``pages`` images of ``folder`` with the models in a server."""
    import cv2
    import torch

    import vision
    from vision.predictors.remote import ModelServer, install

    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg"))[:pages]
    images = [cv2.cvtColor(cv2.imread(str(f)), cv2.COLOR_BGR2RGB) for f in files]
    with ModelServer("cpu", 1) as server:
        install(server.client(0))
        try:
            ocr = vision.ocr_predictor(device="cpu", onnx=False, pages_per_batch=per_call,
                                       det_batch_size=per_call, reco_batch_size=1024)
            ocr(images[:per_call])
            cpu, wall = time.process_time(), time.perf_counter()
            for k in range(per_call, len(images), per_call):
                ocr(images[k:k + per_call])
            n = len(images) - per_call
            return {"pages": n, "worker_cpu_ms_per_page": round(1000 * (time.process_time() - cpu) / n, 2),
                    "wall_ms_per_page": round(1000 * (time.perf_counter() - wall) / n, 1)}
        finally:
            install(None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--pages", type=Path, default=None,
                        help="a folder of page images: also the worker's CPU time per page")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    report = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores",
              "rounds": args.rounds}
    for mode in ("queue", "arena"):
        report[mode] = measure(mode, args.rounds)
        row = report[mode]
        print(f"{mode:<6} round trip {row['round_trip_ms']:.2f} ms, server {row['server_ms']:.2f} ms")
    if args.pages is not None:
        report["worker"] = worker_cpu(args.pages)
        print(f"worker CPU {report['worker']['worker_cpu_ms_per_page']:.1f} ms a page")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
