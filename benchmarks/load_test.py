"""Load test of the REST service on loopback: 64 concurrent clients for 60 s against POST /v1/ocr.

    python benchmarks/load_test.py [--clients 64] [--duration 60] [--weights random|default] [--out FILE]

A real ``vision serve`` process is started on 127.0.0.1; each client posts the sample page, waits for the
answer and posts again (closed loop), until the duration ends (requests then in flight still finish). The
load starts ``--warmup`` seconds before the measured window and never pauses, so the allocator is in its
steady state when measuring begins (give the warm-up at least one request latency). Reports the status
codes (zero 5xx required), p50/p90/p99 latency, throughput, mean model batch size, and the server's
resident memory (its model replica processes included): the mean RSS of the last 10 s of load must stay within 10% of the first 10 s. Prints a
table, writes JSON (default ``benchmarks/results/load_test.json``) and exits 1 when a requirement fails.
Everything is bounded: the run stops at the duration, every request has a timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psutil
from _service import REPO, add_common_arguments, batch_stats, percentile, running_server, service_config


async def _client(
    http: httpx.AsyncClient, url: str, payload: bytes, stop_at: float, results: list[tuple[float, float, int]]
) -> None:
    """Post, wait, repeat until ``stop_at``.

    Records ``(finished_at, latency_s, status)`` per request, status 0 for a transport error or timeout.
    """
    while time.monotonic() < stop_at:
        start = time.monotonic()
        try:
            status = (await http.post(url, files={"file": ("page.png", payload)})).status_code
        except httpx.HTTPError:
            status = 0
        results.append((time.monotonic(), time.monotonic() - start, status))


async def _run(
    url: str, payload: bytes, clients: int, duration: float, timeout: float
) -> tuple[list[tuple[float, float, int]], float]:
    """``clients`` closed-loop clients for ``duration`` seconds; returns the records and the start time."""
    results: list[tuple[float, float, int]] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=timeout, limits=limits) as http:
        start = time.monotonic()
        tasks = [_client(http, url, payload, start + duration, results) for _ in range(clients)]
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=duration + timeout + 60)
    return results, start


def _tree_rss(proc: psutil.Process) -> int:
    """Resident bytes of the server and its model replica processes (``models.replicas``)."""
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:  # a child that just ended
            pass
    return total


def _sample_rss(proc: psutil.Process, samples: list[tuple[float, int]], stop: threading.Event) -> None:
    while not stop.wait(0.5):
        try:
            samples.append((time.monotonic(), _tree_rss(proc)))
        except psutil.Error:
            return


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument(
        "--warmup", type=float, default=20.0, help="seconds of load before the measured window"
    )
    parser.add_argument("--max-batch", type=int, default=16)
    parser.add_argument("--max-wait-ms", type=float, default=5.0)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "load_test.json")
    add_common_arguments(parser)
    args = parser.parse_args()
    payload = args.page.read_bytes()
    config = service_config(args, max_size=args.max_batch, max_wait_ms=args.max_wait_ms)
    with running_server(config, workers=args.workers) as (base, proc):
        samples: list[tuple[float, int]] = []
        stop = threading.Event()
        sampler = threading.Thread(target=_sample_rss, args=(proc, samples, stop), daemon=True)
        sampler.start()
        marks: dict[str, tuple[float, float]] = {}
        timer = threading.Timer(args.warmup, lambda: marks.setdefault("warm", batch_stats(base)))
        timer.start()  # batch counters when the measured window opens
        results, t0 = asyncio.run(
            _run(f"{base}/v1/ocr", payload, args.clients, args.warmup + args.duration, args.timeout + 30)
        )
        stop.set()
        sampler.join(5)
        timer.join(5)
        batches1, pages1 = batch_stats(base)
    batches0, pages0 = marks.get("warm", (0.0, 0.0))
    report = _report(args, results, t0 + args.warmup, samples, (batches1 - batches0, pages1 - pages0))
    _print(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if report["pass"] else 1


def _report(
    args: argparse.Namespace,
    results: list[tuple[float, float, int]],
    start: float,
    samples: list[tuple[float, int]],
    batches: tuple[float, float],
) -> dict[str, Any]:
    """Status codes over every request (warm-up included); latency over the requests started in the
    measured window ``[start, start + duration]``, throughput over those completed in it, RSS within it."""
    measured = [r for r in results if r[0] - r[1] >= start]
    end = max((r[0] for r in measured), default=start)
    ok = [lat for _, lat, status in measured if status == 200]
    codes = Counter(status for _, _, status in results)
    stop = start + args.duration  # requests in flight then still finish; RSS windows are of the load itself
    first = [rss for t, rss in samples if start <= t <= start + 10.0]
    last = [rss for t, rss in samples if stop - 10.0 <= t <= stop]
    first_mb, last_mb = (
        sum(first) / len(first) / 2**20 if first else float("nan"),
        sum(last) / len(last) / 2**20 if last else float("nan"),
    )
    growth = (last_mb - first_mb) / first_mb * 100
    server_errors = sum(n for code, n in codes.items() if code >= 500 or code == 0)
    return {
        "machine": f"{platform.node()} ({psutil.cpu_count()} CPUs)",
        "clients": args.clients,
        "duration_s": args.duration,
        "drain_s": round(max(0.0, end - start - args.duration), 2),
        "warmup_s": args.warmup,
        "warmup_requests": len(results) - len(measured),
        "weights": args.weights,
        "det_size": args.det_size,
        "torch_threads": args.torch_threads or "default",
        "workers": args.workers,
        "replicas": args.replicas,
        "worker_nice": args.worker_nice,
        "requests": len(measured),
        "status_codes": {str(k): v for k, v in sorted(codes.items())},
        "server_errors": server_errors,
        "throughput_rps": round(
            sum(1 for t, _, code in results if start <= t <= stop and code == 200) / args.duration, 2
        ),
        "latency_s": {f"p{q}": round(percentile(ok, q), 3) for q in (50, 90, 99)},
        "mean_batch_pages": round(batches[1] / batches[0], 2) if batches[0] else None,
        "rss_mb": {
            "first_10s": round(first_mb, 1),
            "last_10s": round(last_mb, 1),
            "growth_pct": round(growth, 2),
            "timeline": [[round(t - start, 1), round(rss / 2**20, 1)] for t, rss in samples[::4]],
        },
        "pass": server_errors == 0 and growth < 10.0 and len(ok) > 0,
    }


def _print(r: dict[str, Any]) -> None:
    rows = [
        ("clients x duration", f"{r['clients']} x {r['duration_s']:g} s (+{r['drain_s']} s to drain)"),
        ("requests (measured + warm-up)", f"{r['requests']} + {r['warmup_requests']}"),
        ("status codes (all requests)", r["status_codes"]),
        ("5xx / transport errors", r["server_errors"]),
        ("throughput (req/s)", r["throughput_rps"]),
        ("latency p50 / p90 / p99 (s)", " / ".join(str(v) for v in r["latency_s"].values())),
        ("mean pages per model batch", r["mean_batch_pages"]),
        ("server RSS first / last 10 s (MiB)", f"{r['rss_mb']['first_10s']} / {r['rss_mb']['last_10s']}"),
        ("RSS growth", f"{r['rss_mb']['growth_pct']} % (limit 10 %)"),
        ("result", "PASS" if r["pass"] else "FAIL"),
    ]
    width = max(len(k) for k, _ in rows)
    print(
        f"load test on {r['machine']}, weights={r['weights']}, "
        f"detector input {r['det_size'] or 'default'} px, {r['torch_threads']} torch thread(s)"
    )
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")


if __name__ == "__main__":
    raise SystemExit(main())
