"""Wall time of a one-page ``vision ocr`` (start-up included) with two or more builds of the package,
alternated run by run.

    python benchmarks/ocr_startup.py PACKAGE_ROOT... [--runs 7] [--page PNG] [--out FILE]

Each PACKAGE_ROOT holds a ``vision/`` package (a checkout: ``git worktree add /tmp/base REV`` for a
baseline). Every run is a fresh ``vision ocr PAGE --format txt`` process (the script's entry point) on the
CPU, with the package's own ONNX cache warmed by one run first (the exports of a first run on a new machine
are not counted), so both builds see the same machine load. Prints and writes JSON: median and all wall
times per package, and whether the outputs were identical.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
CLI = "import sys; from vision.app.cli import main; sys.exit(main(sys.argv[1:]))"  # the `vision` script
PAGE = HERE.parent / "vision" / "assets" / "sample_page.png"


def _run(root: str, cache: str, page: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": root, "VISION_CACHE": cache, "CUDA_VISIBLE_DEVICES": ""}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CLI, "ocr", page, "--format", "txt"], cwd=root, env=env,
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", help="folders holding a vision/ package")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--page", default=str(PAGE))
    parser.add_argument("--out", default=str(HERE / "results" / "ocr_startup.json"))
    args = parser.parse_args()
    roots = [str(Path(r).resolve()) for r in args.roots]
    caches = [f"/tmp/vision-startup-cache{k}" for k in range(len(roots))]
    texts = [_run(root, cache, args.page)[1] for root, cache in zip(roots, caches)]  # warm the caches
    times: list[list[float]] = [[] for _ in roots]
    for _ in range(args.runs):
        for k, (root, cache) in enumerate(zip(roots, caches)):
            seconds, text = _run(root, cache, args.page)
            times[k].append(seconds)
            texts[k] = text
    out = {
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "page": args.page,
        "runs": args.runs,
        "same_output": all(t == texts[0] for t in texts),
        "packages": [{"root": r, "median_s": statistics.median(t), "wall_s": [round(s, 3) for s in t]}
                     for r, t in zip(roots, times)],
    }
    print(json.dumps(out, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
