"""Dynamic batching, measured: throughput at 16 concurrent clients against one client at a time.

    python benchmarks/batching.py [--clients 16] [--seconds 20] [--weights random|default] [--out FILE]

Three rows on real ``vision serve`` processes on loopback, each posting the sample page to POST /v1/ocr
in a closed loop: one client at a time (the baseline), ``--clients`` concurrent clients with batching off
(``max_size=1``: concurrency only) and with dynamic batching on (``max_size=16``). Each row reports
pages/s, its ratio to the baseline, p50/p99 latency and the mean pages per model call (from /metrics).
Prints a table, writes JSON (default ``benchmarks/results/batching.json``).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
from _service import REPO, add_common_arguments, batch_stats, percentile, running_server, service_config


def _closed_loop(
    url: str, payload: bytes, seconds: float, timeout: float, count: int | None = None
) -> list[tuple[float, int]]:
    """One client posting for ``seconds`` (or ``count`` times): ``(latency_s, status)`` per request."""
    out: list[tuple[float, int]] = []
    with httpx.Client(timeout=timeout) as http:
        stop_at = time.monotonic() + seconds
        while time.monotonic() < stop_at and (count is None or len(out) < count):
            start = time.monotonic()
            status = http.post(url, files={"file": ("page.png", payload)}).status_code
            out.append((time.monotonic() - start, status))
    return out


def _measure(base: str, payload: bytes, clients: int, seconds: float, timeout: float) -> dict[str, Any]:
    url = f"{base}/v1/ocr"
    with ThreadPoolExecutor(clients) as pool:  # warm-up: every client once, outside the clock
        list(pool.map(lambda _: _closed_loop(url, payload, float("inf"), timeout, count=1), range(clients)))
    batches0, pages0 = batch_stats(base)
    start = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        runs = list(pool.map(lambda _: _closed_loop(url, payload, seconds, timeout), range(clients)))
    elapsed = time.monotonic() - start
    batches1, pages1 = batch_stats(base)
    results = [r for run in runs for r in run]
    ok = [lat for lat, status in results if status == 200]
    return {
        "clients": clients,
        "requests": len(results),
        "errors": len(results) - len(ok),
        "pages_per_s": round(len(ok) / elapsed, 3),
        "p50_s": round(percentile(ok, 50), 3),
        "p99_s": round(percentile(ok, 99), 3),
        "pages_per_batch": round((pages1 - pages0) / (batches1 - batches0), 2)
        if batches1 > batches0
        else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per row")
    parser.add_argument("--max-wait-ms", type=float, default=5.0)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "batching.json")
    add_common_arguments(parser)
    args = parser.parse_args()
    payload = args.page.read_bytes()
    rows = []
    with running_server(service_config(args, max_size=16, max_wait_ms=args.max_wait_ms)) as (base, _):
        rows.append(
            {"row": "1 client, batching on", **_measure(base, payload, 1, args.seconds, args.timeout)}
        )
        rows.append(
            {
                "row": f"{args.clients} clients, batching on (max 16)",
                **_measure(base, payload, args.clients, args.seconds, args.timeout),
            }
        )
    with running_server(service_config(args, max_size=1, max_wait_ms=0)) as (base, _):
        rows.insert(
            1,
            {
                "row": f"{args.clients} clients, batching off (max 1)",
                **_measure(base, payload, args.clients, args.seconds, args.timeout),
            },
        )
    baseline = rows[0]["pages_per_s"]
    for row in rows:
        row["vs_one_client"] = round(row["pages_per_s"] / baseline, 2) if baseline else None
    report = {
        "machine": f"{platform.node()} ({psutil.cpu_count()} CPUs, CPU inference)",
        "weights": args.weights,
        "det_size": args.det_size,
        "torch_threads": args.torch_threads or "default",
        "seconds_per_row": args.seconds,
        "rows": rows,
    }
    print(
        f"dynamic batching on {report['machine']}, weights={args.weights}, detector input "
        f"{args.det_size or 'default'} px, {args.torch_threads or 'default'} torch thread(s), "
        f"{args.seconds:g} s per row"
    )
    print(
        f"  {'row':<36} {'pages/s':>8} {'x 1 client':>10} {'p50 s':>7} {'p99 s':>7} "
        f"{'pages/batch':>11} {'errors':>6}"
    )
    for r in rows:
        print(
            f"  {r['row']:<36} {r['pages_per_s']:>8} {r['vs_one_client']:>10} {r['p50_s']:>7} "
            f"{r['p99_s']:>7} "
            f"{r['pages_per_batch']!s:>11} {r['errors']:>6}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
