"""Attack a real ``vision serve`` (default settings plus an API key) the way a hostile client would.

    python benchmarks/attack.py [--duration 60] [--clients 64] [--slow 200] [--light] [--out FILE]

At the same time: ``--clients`` legitimate clients post the sample page in a closed loop for ``--duration``
seconds; ``--slow`` connections trickle their request headers one byte a second; 20 anonymous clients
each start a 50 MB upload; every bomb of ``tests/security/bombs.py`` is posted (a 35-byte GIF with a
13000x13000 screen, a 20-page TIFF of 169 MP pages, a 13000x13000 16-bit PNG, a PDF drawing nested forms
10**8 times, synchronously and as a job), plus three 20-page PDFs at 600 dpi, a NUL in a file name and
pages out of range. ``/healthz`` is probed every 50 ms throughout.

Requirements (exit 1 when one fails): the server never dies, its peak RSS stays within the configured
``memory_budget_bytes`` (printed), no 5xx answer to anyone, ``/healthz`` p99 under 100 ms, each bomb
answered 413/422 within its limit, anonymous uploads refused (401) before their bodies are read.
``--light`` uses random weights and a 256 px detector (a 2-core CPU); the default is the shipped models.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psutil
from _service import REPO, SAMPLE, free_port, percentile, running_server

sys.path.insert(0, str(REPO / "tests" / "security"))
from bombs import gif_screen_bomb, pdf_forms_bomb, png16_bomb, tiff_pages_bomb

KEY = "attack-test-key"
AUTH = {"X-API-Key": KEY}


def _digital_pdf(pages: int) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=14)
    for i in range(pages):
        pdf.add_page()
        pdf.multi_cell(0, 10, f"Page {i + 1}. " + "The quick brown fox jumps over the lazy dog. " * 12)
    return bytes(pdf.output())


class Monitor(threading.Thread):
    """Samples the server's RSS (and its PDF workers') every 50 ms; notices if the server dies."""

    def __init__(self, proc: psutil.Process) -> None:
        super().__init__(daemon=True)
        self.proc, self.stop = proc, threading.Event()
        self.peak = self.children_peak = 0
        self.died = False

    def run(self) -> None:
        while not self.stop.wait(0.05):
            try:
                self.peak = max(self.peak, self.proc.memory_info().rss)
                kids = self.proc.children(recursive=True)
            except psutil.NoSuchProcess:
                self.died = True
                return
            except psutil.Error:
                continue
            total = 0
            for kid in kids:  # PDF workers come and go: one that vanished meanwhile counts nothing
                try:
                    if "forkserver" not in " ".join(kid.cmdline()):
                        total += kid.memory_info().rss
                except psutil.Error:
                    pass
            self.children_peak = max(self.children_peak, total)


async def _legit(http: httpx.AsyncClient, base: str, page: bytes, stop_at: float, codes: Counter) -> None:
    while time.monotonic() < stop_at:
        try:
            response = await http.post(f"{base}/v1/ocr", files={"file": ("page.png", page)}, headers=AUTH)
            codes[response.status_code] += 1
        except httpx.HTTPError as exc:
            codes[type(exc).__name__] += 1


async def _health(base: str, stop_at: float, latencies: list[float], codes: Counter) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        while time.monotonic() < stop_at:
            start = time.monotonic()
            try:
                codes[(await http.get(f"{base}/healthz")).status_code] += 1
            except httpx.HTTPError as exc:
                codes[type(exc).__name__] += 1
            latencies.append(time.monotonic() - start)
            await asyncio.sleep(0.05)


_PROBE = r"""
import http.client, json, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
lat, codes, conn = [], {}, None
stop_at = time.monotonic() + seconds
while time.monotonic() < stop_at:
    start = time.monotonic()
    try:
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        response.read()
        code = str(response.status)
    except (OSError, http.client.HTTPException) as exc:
        code, conn = type(exc).__name__, None
    lat.append((start, time.monotonic() - start))
    codes[code] = codes.get(code, 0) + 1
    time.sleep(0.05)
json.dump({"latencies": lat, "codes": codes}, sys.stdout)
"""


_CONTROL = r"""
import asyncio, sys
BODY = b'{"status":"ok"}'
async def handle(reader, writer):
    try:
        while await reader.readline():
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n" + BODY)
            await writer.drain()
    finally:
        writer.close()
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[1]))
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""


def _start_control(port: int) -> subprocess.Popen:
    """The machine's floor: a trivial asyncio HTTP responder (stdlib only, no OCR, nothing else to do) probed
    the same way at the same time; what its probe sees is the scheduling delay of the loaded machine."""
    return subprocess.Popen([sys.executable, "-c", _CONTROL, str(port)])


def _start_prober(port: int, seconds: float) -> subprocess.Popen:
    """``/healthz`` every 50 ms from a process of its own (as an orchestrator probes it: the attack's own
    event loop, busy with 100 clients, would add its lag to the latency measured)."""
    return subprocess.Popen(
        [sys.executable, "-c", _PROBE, str(port), str(seconds)], stdout=subprocess.PIPE, text=True
    )


async def _anonymous(base: str, size: int, results: list[tuple[int | str, float, int]]) -> None:
    """A 50 MB upload without a key; records (status, seconds, bytes the server let us send)."""
    sent = 0

    async def body() -> Any:
        nonlocal sent
        chunk = b"\0" * (1 << 20)
        for _ in range(size >> 20):
            sent += len(chunk)
            yield chunk
            await asyncio.sleep(0.01)

    start = time.monotonic()
    headers = {"content-type": "multipart/form-data; boundary=x", "content-length": str(size)}
    try:
        async with httpx.AsyncClient(timeout=60) as http:
            status: int | str = (
                await http.post(f"{base}/v1/ocr", content=body(), headers=headers)
            ).status_code
    except httpx.HTTPError as exc:
        status = type(exc).__name__  # the server closed the connection after its 401: also a refusal
    results.append((status, time.monotonic() - start, sent))


def _slow_clients(port: int, count: int, stop_at: float, closed: list[float]) -> None:
    """``count`` connections sending one header byte a second; records when the server closed each."""
    socks = []
    for _ in range(count):
        try:
            socks.append((socket.create_connection(("127.0.0.1", port), timeout=5), time.monotonic()))
        except OSError:
            break
    request = b"POST /v1/ocr HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 10_000
    position = 0
    while socks and time.monotonic() < stop_at:
        alive = []
        for sock, opened in socks:
            try:
                sock.sendall(request[position : position + 1])
                alive.append((sock, opened))
            except OSError:
                closed.append(time.monotonic() - opened)
                sock.close()
        socks, position = alive, position + 1
        time.sleep(1.0)
    for sock, _ in socks:
        sock.close()


def _multipart(name: str, data: bytes) -> tuple[bytes, dict[str, str]]:
    """A multipart body written by hand: HTTP clients escape the file name, an attacker sends it raw."""
    head = f'--x\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n'
    body = head.encode("latin-1") + data + b"\r\n--x--\r\n"
    return body, {"content-type": "multipart/form-data; boundary=x", **AUTH}


async def _bomb(http: httpx.AsyncClient, base: str, name: str, data: bytes, params: dict, path: str) -> dict:
    start = time.monotonic()
    body, headers = _multipart(name, data)
    try:
        response = await http.post(f"{base}{path}", content=body, params=params, headers=headers)
        status, body = response.status_code, response.json()
    except (httpx.HTTPError, ValueError) as exc:
        status, body = 0, {"error": type(exc).__name__}
    if path == "/v1/jobs" and status == 202:  # follow the job to its end
        job_id = body["id"]
        while body.get("status") in ("queued", "running") and time.monotonic() - start < 300:
            await asyncio.sleep(0.5)
            body = (await http.get(f"{base}/v1/jobs/{job_id}", headers=AUTH)).json()
        status = {"failed": 422, "succeeded": 200}.get(body.get("status"), 0)
        body = body.get("error") or {}
    return {
        "input": name,
        "path": path,
        "bytes": len(data),
        "status": status,
        "error": body.get("error"),
        "seconds": round(time.monotonic() - start, 2),
    }


async def _attack(args: argparse.Namespace, base: str, port: int) -> dict[str, Any]:
    stop_at = time.monotonic() + args.duration
    page = args.page.read_bytes()
    legit, health = Counter(), Counter()
    health_lat: list[float] = []
    anonymous: list[tuple[int | str, float, int]] = []
    slow_closed: list[float] = []
    slow = threading.Thread(target=_slow_clients, args=(port, args.slow, stop_at, slow_closed), daemon=True)
    slow.start()
    prober = _start_prober(port, args.duration + 30)
    control_port = free_port()
    control = _start_control(control_port)
    time.sleep(0.5)
    control_prober = _start_prober(control_port, args.duration + 30)
    limits = httpx.Limits(max_connections=args.clients + 16)
    async with httpx.AsyncClient(timeout=args.duration + 120, limits=limits) as http:
        pdf20 = _digital_pdf(20)
        bombs = [
            ("gif-screen.gif", gif_screen_bomb(), {}, "/v1/ocr"),
            ("tiff-pages.tif", tiff_pages_bomb(), {}, "/v1/ocr"),
            ("png16.png", png16_bomb(), {}, "/v1/ocr"),
            ("forms-1e8.pdf", pdf_forms_bomb(8, 10), {}, "/v1/ocr"),
            ("forms-1e8-job.pdf", pdf_forms_bomb(8, 10), {}, "/v1/jobs"),
            ("forms-1e6.pdf", pdf_forms_bomb(6, 10), {}, "/v1/ocr"),
            ("nul\0name.png", page, {}, "/v1/jobs"),
            ("pages.pdf", pdf20, {"pages": "30"}, "/v1/ocr"),
            ("pages-job.pdf", pdf20, {"pages": "25-40"}, "/v1/jobs"),
        ] + [(f"20pages-600dpi-{i}.pdf", pdf20, {"dpi": 600, "format": "txt"}, "/v1/ocr") for i in range(3)]
        tasks = [_legit(http, base, page, stop_at, legit) for _ in range(args.clients)]
        tasks.append(_health(base, stop_at + 30, health_lat, health))
        tasks += [_anonymous(base, 50 * 1024**2, anonymous) for _ in range(20)]
        bomb_tasks = [asyncio.ensure_future(_bomb(http, base, *b)) for b in bombs]
        await asyncio.gather(*tasks)
        bomb_results = await asyncio.gather(*bomb_tasks)
    slow.join(5)
    t0 = stop_at - args.duration
    probed = json.loads(await asyncio.to_thread(lambda: prober.communicate()[0]))
    controlled = json.loads(await asyncio.to_thread(lambda: control_prober.communicate()[0]))
    control.terminate()
    control.wait(10)
    return {
        "probe_lat": [lat for _, lat in probed["latencies"]],
        "probe_slow": [(round(t - t0, 2), round(lat * 1000)) for t, lat in probed["latencies"] if lat > 0.1],
        "probe": Counter(probed["codes"]),
        "control_lat": [lat for _, lat in controlled["latencies"]],
        "legit": legit,
        "health": health,
        "health_lat": health_lat,
        "anonymous": anonymous,
        "slow_closed": slow_closed,
        "bombs": bomb_results,
    }


def _report(args: argparse.Namespace, raw: dict, monitor: Monitor, budget: int) -> dict[str, Any]:
    fivexx = sum(n for code, n in raw["legit"].items() if isinstance(code, int) and code >= 500)
    fivexx += sum(1 for b in raw["bombs"] if b["status"] >= 500)
    fivexx += sum(n for code, n in raw["health"].items() if isinstance(code, int) and code >= 500)
    fivexx += sum(n for code, n in raw["probe"].items() if code.isdigit() and int(code) >= 500)
    fivexx += sum(1 for status, _, _ in raw["anonymous"] if isinstance(status, int) and status >= 500)
    p99 = percentile(raw["probe_lat"], 99) * 1000
    bombs_ok = all(b["status"] in (413, 422) for b in raw["bombs"] if not b["input"].startswith("20pages"))
    heavy_ok = all(b["status"] in (200, 413, 503) for b in raw["bombs"] if b["input"].startswith("20pages"))
    anon_ok = all(
        s in (401, "RemoteProtocolError", "WriteError", "ReadError") for s, _, _ in raw["anonymous"]
    )
    checks = {
        "no server death": not monitor.died,
        "peak RSS within budget": monitor.peak <= budget,
        "no 5xx": fivexx == 0,
        "healthz p99 < 100 ms": p99 < 100,
        "bombs 413/422": bombs_ok and heavy_ok,
        "anonymous uploads refused": anon_ok,
    }
    return {
        "machine": platform.node(),
        "cpu_count": psutil.cpu_count(),
        "duration_s": args.duration,
        "clients": args.clients,
        "weights": "random (light)" if args.light else "shipped",
        "worker_nice": 10 if args.worker_nice is None else args.worker_nice,
        "memory_budget_bytes": budget,
        "peak_rss_bytes": monitor.peak,
        "pdf_workers_peak_rss_bytes": monitor.children_peak,
        "legit_status": {str(k): v for k, v in raw["legit"].items()},
        "health_status": {str(k): v for k, v in raw["health"].items()},
        "healthz_p50_ms": round(percentile(raw["probe_lat"], 50) * 1000, 1),
        "healthz_p99_ms": round(p99, 1),
        "healthz_max_ms": round(max(raw["probe_lat"], default=float("nan")) * 1000, 1),
        "probe_status": dict(raw["probe"]),
        "healthz_over_100ms": raw["probe_slow"],  # (seconds into the attack, ms)
        "control_p50_ms": round(percentile(raw["control_lat"], 50) * 1000, 1),
        "control_p99_ms": round(percentile(raw["control_lat"], 99) * 1000, 1),
        "healthz_in_attack_loop_p50_ms": round(percentile(raw["health_lat"], 50) * 1000, 1),
        "healthz_in_attack_loop_p99_ms": round(percentile(raw["health_lat"], 99) * 1000, 1),
        "load_average_start": args.load_start,
        "load_average_end": list(os.getloadavg()),
        "anonymous": [{"status": s, "seconds": round(t, 2), "bytes_sent": b} for s, t, b in raw["anonymous"]],
        "slow_clients": args.slow,
        "slow_closed": len(raw["slow_closed"]),
        "slow_closed_after_s_max": round(max(raw["slow_closed"], default=0.0), 1),
        "bombs": raw["bombs"],
        "five_xx": fivexx,
        "checks": checks,
        "pass": all(checks.values()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--slow", type=int, default=200, help="slow-header connections")
    parser.add_argument("--light", action="store_true", help="random weights, 256 px detector (CPU)")
    parser.add_argument("--page", type=Path, default=SAMPLE)
    parser.add_argument(
        "--worker-nice", type=int, default=None, help="the server's worker_nice (default: its default, 10)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "attack.json")
    args = parser.parse_args()
    args.load_start = list(os.getloadavg())
    config: dict[str, Any] = {"api_key": KEY}
    if args.worker_nice is not None:
        config["worker_nice"] = args.worker_nice
    if args.light:
        config["models"] = {
            "det_weights": "random",
            "reco_weights": "random",
            "torch_threads": 1,
            "det_input_shapes": [[256, 256], [256, 192], [192, 256]],
        }
    from vision.app.api.settings import ServiceSettings

    budget = ServiceSettings(**config).limits.memory_budget_bytes
    print(f"memory budget: {budget / 1024**3:.2f} GiB (limits.memory_budget_bytes)")
    with running_server(config) as (base, proc):
        monitor = Monitor(proc)
        monitor.start()
        port = int(base.rsplit(":", 1)[1])
        raw = asyncio.run(_attack(args, base, port))
        monitor.died = monitor.died or not proc.is_running()
        monitor.stop.set()
        monitor.join(5)
    report = _report(args, raw, monitor, budget)
    for key in (
        "machine",
        "weights",
        "worker_nice",
        "peak_rss_bytes",
        "pdf_workers_peak_rss_bytes",
        "legit_status",
        "health_status",
        "probe_status",
        "healthz_p50_ms",
        "healthz_p99_ms",
        "healthz_max_ms",
        "healthz_over_100ms",
        "control_p50_ms",
        "control_p99_ms",
        "healthz_in_attack_loop_p50_ms",
        "healthz_in_attack_loop_p99_ms",
        "load_average_start",
        "load_average_end",
        "slow_closed",
        "slow_closed_after_s_max",
        "five_xx",
    ):
        print(f"{key:28} {report[key]}")
    for b in report["bombs"]:
        print(
            f"  {b['input']!r:28} {b['path']:9} {b['bytes']:>9} B -> {b['status']} {b['error']} "
            f"in {b['seconds']} s"
        )
    print(
        "anonymous 50 MB uploads:",
        Counter(str(a["status"]) for a in report["anonymous"]),
        f"max {max(a['seconds'] for a in report['anonymous'])} s,",
        f"max {max(a['bytes_sent'] for a in report['anonymous']) >> 20} MiB sent",
    )
    for name, ok in report["checks"].items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
