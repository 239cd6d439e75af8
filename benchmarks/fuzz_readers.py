"""Fuzz the readers: feed seeded byte mutations of generated images, PDFs and videos to `vision.io`.

Each input runs in a worker process with a per-input timeout. Reported per seed format: inputs, inputs
read fine, VisionErrors by class, crashes (worker died: segfault, abort, OOM kill), hangs (timeout) and
other exceptions (any non-VisionError is a bug). The baseline is the unmutated seeds, read in the same
run: every one must read fine.

    nice -n 19 .venv/bin/python benchmarks/fuzz_readers.py --inputs 10000 --workers 2 [--limits production]

Limits are the service's (``LimitSettings().reader_limits(job=True)``: 50 MB, 100 MP, 2,000 pages, PDFs in
a sandboxed worker) unless ``--limits small``. Peak RSS is the largest of a fuzz worker and its PDF workers.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import platform
import random
import sys
import time
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

# --limits small: a lying header cannot make one input allocate gigabytes (quick runs).
SMALL_LIMITS = {"max_bytes": 8 * 1024**2, "max_pixels": 4096 * 4096, "max_pages": 64, "max_frames": 64}


def production_limits() -> dict[str, Any]:
    """--limits production (the default): what a default ``vision serve`` gives the readers of jobs."""
    import dataclasses

    from vision.app.api.settings import LimitSettings

    return dataclasses.asdict(LimitSettings().reader_limits(job=True))


MAX_PAGES_DECODED = 4  # pages or frames decoded per input (opening already parses every header)


from fuzz_inputs import fix_png_crcs, make_seeds, mutate  # noqa: E402  (beside this script)



# ----------------------------------------------------------------------------- worker
def read_input(kind: str, data: bytes, via_path: bool, limits_dict: dict[str, Any]) -> int:
    """Open ``data`` with the reader for ``kind`` (or by sniffing) and decode a few pages; returns pages."""
    from vision.io import DocumentFile
    from vision.settings import Limits

    limits = Limits(**limits_dict)
    if via_path:
        doc = DocumentFile.from_path(data, limits=limits, fps=2.0)
    elif kind == "image":
        doc = DocumentFile.from_images([data], limits=limits)
    elif kind == "pdf":
        doc = DocumentFile.from_pdf(data, dpi=72, limits=limits)
    else:
        doc = DocumentFile.from_video(data, fps=4.0, limits=limits)
    with doc:
        doc.describe()
        pages = 0
        for page in doc:
            assert page.image.dtype.name == "uint8" and page.image.ndim == 3 and page.image.shape[2] == 3
            pages += 1
            if pages >= MAX_PAGES_DECODED:
                break
    return pages


def worker(conn: Any) -> None:
    """Serve ``(kind, data, via_path)`` requests until the pipe closes."""
    import resource
    import traceback
    import warnings

    warnings.simplefilter("ignore")  # Pillow warns on damaged TIFF tags; outcomes are what we count
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)  # libtiff and FFmpeg print diagnostics from C; failing inputs are saved instead
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import pypdfium2  # noqa: F401  (import the heavy readers now, not inside the first timed input)
    import torchcodec.decoders  # noqa: F401

    import vision.io.image  # noqa: F401
    import vision.io.pdf  # noqa: F401
    import vision.io.video  # noqa: F401
    from vision.errors import VisionError

    conn.send("ready")
    while True:
        try:
            kind, data, via_path, limits = conn.recv()
        except EOFError:
            return
        start = time.perf_counter()
        try:
            pages = read_input(kind, data, via_path, limits)
            outcome, detail = ("ok" if pages else "empty"), f"{pages} pages"
        except VisionError as exc:
            outcome, detail = f"VisionError:{type(exc).__name__}", str(exc)[:200]
        except Exception as exc:  # a bug: the readers must only raise VisionError on bad input
            outcome, detail = "exception", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}"
        rss_mb = max(  # this worker, or the largest PDF worker process it started
            resource.getrusage(who).ru_maxrss / 1024
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        conn.send((outcome, detail, time.perf_counter() - start, rss_mb))


class Pool:
    """Worker processes with a per-input deadline: a hung worker is killed and replaced."""

    def __init__(self, size: int, timeout: float, limits: dict[str, Any]) -> None:
        self.limits = limits
        self.ctx = mp.get_context("spawn")  # no fork: PDFium and FFmpeg state must not be shared
        self.timeout = timeout
        self.workers = [self._spawn() for _ in range(size)]

    def _spawn(self) -> dict[str, Any]:
        parent, child = self.ctx.Pipe()
        # Not daemonic: a daemonic process may not start children, and PDFs must go through the
        # production path, a sandboxed PDF worker per document (close() ends these workers).
        proc = self.ctx.Process(target=worker, args=(child,), daemon=False)
        proc.start()
        child.close()
        if not parent.poll(300) or parent.recv() != "ready":
            raise RuntimeError("fuzz worker did not start")
        return {"proc": proc, "conn": parent, "job": None, "deadline": 0.0}

    def run(self, jobs: list[dict[str, Any]], on_result: Any) -> None:
        queue = collections.deque(jobs)
        while queue or any(w["job"] for w in self.workers):
            for w in self.workers:
                if w["job"] is None and queue:
                    w["job"] = queue.popleft()
                    job = w["job"]
                    w["conn"].send((job["kind"], job["data"], job["via_path"], self.limits))
                    w["deadline"] = time.monotonic() + self.timeout
            busy = [w for w in self.workers if w["job"]]
            ready = wait([w["conn"] for w in busy] + [w["proc"].sentinel for w in busy], timeout=0.5)
            for i, w in enumerate(self.workers):
                if not w["job"]:
                    continue
                if w["conn"] in ready:
                    try:
                        outcome, detail, secs, rss = w["conn"].recv()
                    except EOFError:
                        outcome, detail, secs, rss = (
                            "crash",
                            f"worker died (exit {w['proc'].exitcode})",
                            0.0,
                            0.0,
                        )
                    on_result(w["job"], outcome, detail, secs, rss)
                    w["job"] = None
                    if outcome == "crash":
                        self.workers[i] = self._replace(w)
                elif w["proc"].sentinel in ready or not w["proc"].is_alive():
                    w["proc"].join(1)
                    on_result(w["job"], "crash", f"worker died (exit {w['proc'].exitcode})", 0.0, 0.0)
                    self.workers[i] = self._replace(w)
                elif time.monotonic() > w["deadline"]:
                    on_result(w["job"], "hang", f"no result after {self.timeout:g} s", self.timeout, 0.0)
                    self.workers[i] = self._replace(w)

    def _replace(self, w: dict[str, Any]) -> dict[str, Any]:
        if w["proc"].is_alive():
            w["proc"].kill()
        w["proc"].join(5)
        return self._spawn()

    def close(self) -> None:
        for w in self.workers:
            w["conn"].close()
            w["proc"].join(5)
            if w["proc"].is_alive():
                w["proc"].kill()


# ----------------------------------------------------------------------------- main
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="mutated inputs (default 10000)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds per input before it counts as a hang"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--limits",
        choices=("production", "small"),
        default="production",
        help="the service's reader limits (default) or small ones for quick runs",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fuzz_readers.json"))
    parser.add_argument(
        "--keep",
        type=Path,
        default=Path("benchmarks/results/fuzz_failures"),
        help="where failing inputs are saved for reproduction",
    )
    args = parser.parse_args()
    args.limits_used = production_limits() if args.limits == "production" else SMALL_LIMITS
    if args.limits == "production":  # a PDF may use its whole render time before it is stopped
        args.timeout = max(args.timeout, args.limits_used["pdf_timeout_s"] + 10)

    seeds = make_seeds()
    rng = random.Random(args.seed)
    names = sorted(seeds)
    by_kind = collections.defaultdict(list)
    for name in names:
        by_kind[seeds[name][0]].append(seeds[name][1])
    jobs = [
        {"seed": name, "kind": seeds[name][0], "data": seeds[name][1], "via_path": False, "baseline": True}
        for name in names
    ]
    for i in range(args.inputs):
        name = names[i % len(names)]
        kind, data = seeds[name]
        mutated = mutate(data, rng, by_kind[kind])
        if name.startswith("png") and rng.random() < 0.7:
            mutated = fix_png_crcs(mutated)
        jobs.append(
            {
                "seed": name,
                "kind": kind,
                "data": mutated,
                "via_path": rng.random() < 0.2,
                "baseline": False,
                "id": i,
            }
        )

    stats: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    times: dict[str, list[float]] = collections.defaultdict(list)
    failures: list[dict[str, Any]] = []
    baseline: dict[str, str] = {}
    peak_rss = [0.0]
    done = [0]
    t0 = time.perf_counter()

    def on_result(job: dict[str, Any], outcome: str, detail: str, secs: float, rss: float) -> None:
        peak_rss[0] = max(peak_rss[0], rss)
        if job["baseline"]:
            baseline[job["seed"]] = outcome if outcome == "ok" else f"{outcome}: {detail}"
            return
        done[0] += 1
        stats[job["seed"]][outcome] += 1
        times[job["seed"]].append(secs)
        if outcome in ("crash", "hang", "exception", "empty"):
            args.keep.mkdir(parents=True, exist_ok=True)
            path = args.keep / f"{job['id']:05d}-{job['seed']}-{outcome}.bin"
            path.write_bytes(job["data"])
            failures.append(
                {
                    "id": job["id"],
                    "seed": job["seed"],
                    "outcome": outcome,
                    "file": str(path),
                    "detail": detail,
                }
            )
        if done[0] % 500 == 0:
            print(
                f"  {done[0]}/{args.inputs} inputs, {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    pool = Pool(args.workers, args.timeout, args.limits_used)
    try:
        pool.run(jobs, on_result)
    finally:
        pool.close()
    elapsed = time.perf_counter() - t0
    return report(args, stats, times, failures, baseline, elapsed, peak_rss[0])


def report(
    args: argparse.Namespace,
    stats: dict[str, collections.Counter],
    times: dict[str, list[float]],
    failures: list[dict[str, Any]],
    baseline: dict[str, str],
    elapsed: float,
    peak_rss: float,
) -> int:
    """Print the table and write the JSON; exit code 1 on any crash, hang, non-VisionError or bad seed."""
    columns = (
        ("inputs", 7),
        ("ok", 7),
        ("VisionErr", 10),
        ("crash", 7),
        ("hang", 6),
        ("other", 7),
        ("mean ms", 9),
    )
    header = f"{'seed':<14}" + "".join(f"{name:>{width}}" for name, width in columns) + f"{'max ms':>8}"
    print(header)
    print("-" * len(header))
    rows = {}
    total: collections.Counter = collections.Counter()
    for seed in sorted(stats):
        c = stats[seed]
        verr = sum(v for k, v in c.items() if k.startswith("VisionError:"))
        row = {
            "inputs": sum(c.values()),
            "ok": c["ok"],
            "vision_errors": verr,
            "crashes": c["crash"],
            "hangs": c["hang"],
            "other_exceptions": c["exception"] + c["empty"],
            "mean_ms": 1000 * sum(times[seed]) / len(times[seed]),
            "max_ms": 1000 * max(times[seed]),
            "errors_by_class": {
                k.split(":", 1)[1]: v for k, v in sorted(c.items()) if k.startswith("VisionError:")
            },
        }
        rows[seed] = row
        total.update(
            {k: row[k] for k in ("inputs", "ok", "vision_errors", "crashes", "hangs", "other_exceptions")}
        )
        print(
            f"{seed:<14}{row['inputs']:>7}{row['ok']:>7}{verr:>10}{row['crashes']:>7}{row['hangs']:>6}"
            f"{row['other_exceptions']:>7}{row['mean_ms']:>9.1f}{row['max_ms']:>8.0f}"
        )
    print("-" * len(header))
    print(
        f"{'total':<14}{total['inputs']:>7}{total['ok']:>7}{total['vision_errors']:>10}{total['crashes']:>7}"
        f"{total['hangs']:>6}{total['other_exceptions']:>7}"
    )
    seeds_ok = sum(v == "ok" for v in baseline.values())
    print(
        f"baseline: {seeds_ok}/{len(baseline)} unmutated seeds read fine; {elapsed:.0f} s wall, "
        f"{args.workers} workers, timeout {args.timeout:g} s, worker peak RSS {peak_rss:.0f} MB"
    )
    for f in failures[:20]:
        print(f"  {f['outcome']}: {f['file']}: {f['detail'].splitlines()[0][:150]}")
    result = {
        "benchmark": "fuzz_readers",
        "machine": platform.node(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "inputs": args.inputs,
        "seed": args.seed,
        "workers": args.workers,
        "timeout_s": args.timeout,
        "limits": args.limits_used,
        "elapsed_s": round(elapsed, 1),
        "worker_peak_rss_mb": round(peak_rss),
        "baseline": baseline,
        "per_seed": rows,
        "total": dict(total),
        "failures": failures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")
    return int(any(total[k] for k in ("crashes", "hangs", "other_exceptions")) or seeds_ok != len(baseline))


if __name__ == "__main__":
    sys.exit(main())
