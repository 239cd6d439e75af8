"""Shared by the service benchmarks: start ``vision serve`` on a loopback port with given settings."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "vision" / "assets" / "sample_page.png"
_MAIN = "import sys; from vision.app.cli import main; sys.exit(main())"


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def service_config(args: Any, **batching: Any) -> dict[str, Any]:
    """Settings for the benchmark server from the common command-line options."""
    models: dict[str, Any] = {
        "det_weights": args.weights,
        "reco_weights": args.weights,
        "torch_threads": args.torch_threads or None,
        "replicas": args.replicas,
    }
    if args.det_size:
        s = args.det_size
        models["det_input_shapes"] = [[s, s], [s, s * 3 // 4], [s * 3 // 4, s]]
    extra = {} if args.worker_nice is None else {"worker_nice": args.worker_nice}
    return {
        **extra,
        "ui": False,
        "models": models,
        "batching": batching,
        "limits": {"request_timeout_s": args.timeout},
    }


@contextlib.contextmanager
def running_server(
    config: dict[str, Any], *, ready_timeout: float = 300.0, workers: int = 1
) -> Iterator[tuple[str, psutil.Process]]:
    """Start ``vision serve --workers WORKERS`` with ``config`` (a temporary JSON settings file and jobs folder).

    Yields the base URL and the server process; stops it (SIGTERM, then SIGKILL) on exit.
    """
    with tempfile.TemporaryDirectory(prefix="vision-bench-") as tmp:
        path = Path(tmp) / "settings.json"
        path.write_text(json.dumps({**config, "jobs": {"dir": str(Path(tmp) / "jobs")}}))
        port = free_port()
        with open(Path(tmp) / "server.log", "wb") as log:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _MAIN,
                    "serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--config",
                    str(path),
                    "--log-level",
                    "warning",
                    "--workers",
                    str(workers),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO,
            )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + ready_timeout
            while not _ready(base):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"server did not start:\n{(Path(tmp) / 'server.log').read_text()[-3000:]}"
                    )
                time.sleep(0.2)
            yield base, psutil.Process(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)


def _ready(base: str) -> bool:
    try:
        return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def batch_stats(base: str) -> tuple[float, float]:
    """``(model batches, pages)`` so far, from the server's Prometheus metrics."""
    text = httpx.get(f"{base}/metrics", timeout=10).text
    values = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in text.splitlines()
        if line.startswith("vision_batch_pages_")
    }
    return values.get("vision_batch_pages_count", 0.0), values.get("vision_batch_pages_sum", 0.0)


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def add_common_arguments(parser: Any) -> None:
    """Options both service benchmarks take."""
    parser.add_argument("--weights", default="random", help='"random" or "default" (the shipped models)')
    parser.add_argument(
        "--det-size",
        type=int,
        default=256,
        help="detector input side in px (0: the model's default, 1024); small keeps a 2-core CPU busy "
        "with the service rather than with one big convolution",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="server request timeout, seconds")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="server's intra-op threads (0: torch's default, one per core)",
    )
    parser.add_argument("--page", type=Path, default=SAMPLE, help="image posted by every request")
    parser.add_argument("--replicas", type=int, default=1,
                        help="the server's models.replicas: model processes sharing its batches")
    parser.add_argument("--workers", type=int, default=1,
                        help="vision serve --workers: server processes, each with its own models")
    parser.add_argument("--worker-nice", type=int, default=None,
                        help="the server's worker_nice (default: the server's own default)")
