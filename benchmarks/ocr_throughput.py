"""OCR throughput where users run it: ``vision ocr DIR``, the harness beside it, and the public API, in one run.

    python benchmarks/ocr_throughput.py --sources .carry/thru/funsd_dev/images --count 1200 --data .carry/thru/funsd_dev
    python benchmarks/ocr_throughput.py --quick                # 120 pages, short API rounds, no harness
    python benchmarks/ocr_throughput.py --device cpu --quick   # check the script on a CPU

Steps (each one can be left out with ``--skip``; a step that fails is reported and the others still run):

1. ``render``: ``--count`` page images written to a temporary folder (JPEG), variants of the source pages
   (``--sources`` folders of page images, default ``.carry/pages`` or ``.carry/funsd_dev/images`` when
   present, else the bundled sample invoice): each scaled, cropped, shifted and re-lit
   (``benchmarks/_pages.py``), so no page is a copy of another.
2. ``cli``: ``vision ocr DIR -o OUT --device DEVICE`` in a fresh process for each ``--cli`` variant
   (default: the defaults, ``--no-compile``, ``--replicas 12 --jobs 0``): wall clock from the command's start
   to the first and the last output file written, and to the process's exit; pages/s over the whole folder
   (models already on disk), and the steady rate (files after the first 10%, from the 10% mark to the last).
3. ``harness``: ``benchmarks/gpu_throughput.py`` with ``--harness-args`` beside it, same machine, same run.
4. ``api``: ``vision.ocr_predictor(device=DEVICE)`` in this process, ``--per-call`` pages per call, on pages
   no earlier call has seen: fp32 eager, bf16 eager, bf16 + compile (the CUDA default). Warm-up (the first
   ``--warmup-calls`` calls, on their own pages) is timed apart; then the calls of the measured pages.
5. ``map``: ``predictor.map(paths, workers=N)`` (the bulk engine) over the rendered files, default settings.
6. ``f1`` (with ``--data DIR``, a ground-truth set such as ``funsd_dev``): ``vision eval ocr`` end-to-end F1
   with fp32 eager and with the device defaults (bf16 + compile on CUDA).

Prints one JSON summary (and writes it to ``--out`` when given). ``--profile DIR`` writes cProfile stats of
each cli command's main process and of the measured API calls there (read them with ``pstats``).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

STEPS = ("render", "cli", "harness", "api", "map", "f1")
CLI = "import sys; from vision.app.cli import main; sys.exit(main())"
PROFILED_CLI = (  # the CLI's main process under cProfile, stats written to $VISION_BENCH_PROFILE
    "import cProfile, os, sys\nfrom vision.app.cli import main\nprofile = cProfile.Profile()\n"
    "profile.enable()\ntry:\n    rc = main()\nfinally:\n    profile.disable()\n"
    "    profile.dump_stats(os.environ['VISION_BENCH_PROFILE'])\nsys.exit(rc)"
)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _sources(args: argparse.Namespace) -> list[Path]:
    if args.sources:
        return args.sources
    for guess in (REPO / ".carry" / "pages", REPO / ".carry" / "thru" / "funsd_dev" / "images"):
        if guess.is_dir():
            return [guess]
    return []


def run_cli(pages_dir: Path, out_root: Path, device: str, extra: str, timeout: float,
            profile: Path | None = None) -> dict[str, Any]:
    """``vision ocr pages_dir -o OUT --device device EXTRA``: start-to-last-file and start-to-exit seconds.

    With ``profile`` (a folder), the command's main process runs under cProfile (``cli-<hash>.prof``)."""
    tag = f"cli-{abs(hash(extra)) % 10**8}"
    out = out_root / tag
    shutil.rmtree(out, ignore_errors=True)
    env = _env()
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        env["VISION_BENCH_PROFILE"] = str(profile / f"{tag}.prof")
    code = PROFILED_CLI if profile is not None else CLI
    cmd = [sys.executable, "-c", code, "ocr", str(pages_dir), "-o", str(out), "--device", device, "--no-progress",
           *extra.split()]
    start = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    exit_s = time.time() - start
    files = [p for p in out.rglob("*") if p.is_file()] if out.is_dir() else []
    stamps = sorted(p.stat().st_mtime - start for p in files)
    last = stamps[-1] if stamps else 0.0
    tenth = stamps[len(stamps) // 10] if stamps else 0.0
    n = len(list(pages_dir.iterdir()))
    row = {"args": extra or "(defaults)", "tag": tag, "rc": proc.returncode, "files": len(files), "pages": n,
           "to_last_file_s": round(last, 2), "to_exit_s": round(exit_s, 2),
           "first_file_s": round(stamps[0], 2) if stamps else None,
           "pages_per_s": round(len(files) / last, 1) if last > 0 else None,
           # the rate once running: files after the first 10%, over the time from the 10% mark to the last
           "steady_pages_per_s": round((len(stamps) - len(stamps) // 10 - 1) / (last - tenth), 1)
           if len(stamps) > 10 and last > tenth else None}
    if proc.returncode != 0:
        row["stderr_tail"] = proc.stderr[-2000:]
    return row


def run_harness(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    out = scratch / "harness.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "gpu_throughput.py"), *args.harness_args.split(),
           "--device", args.device, "--out", str(out)]
    proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=args.timeout)
    if proc.returncode != 0 or not out.is_file():
        return {"rc": proc.returncode, "stderr_tail": proc.stderr[-2000:]}
    report = json.loads(out.read_text())
    return {"args": args.harness_args, "rows": report.get("rows"), "machine": report.get("machine")}


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_api(args: argparse.Namespace, sources: list[Any]) -> list[dict[str, Any]]:
    """Public API, ``--per-call`` pages a call, each configuration on its own never-seen pages."""
    import torch
    from _pages import variant

    import vision

    configs = [("fp32", torch.float32, False, 1), ("bf16", torch.bfloat16, False, 1),
               ("bf16+compile", torch.bfloat16, True, 1)]
    if not args.device.startswith("cuda"):
        configs = configs[:1]
    configs = [c for c in configs if c[0] in args.api_configs.split(",")]
    if args.api_replicas > 1:  # the fastest eager configuration again, read by that many replica processes
        dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
        configs.append((f"{'bf16' if dtype == torch.bfloat16 else 'fp32'} x{args.api_replicas} replicas", dtype,
                        False, args.api_replicas))
    per, warm = args.per_call, args.warmup_calls
    need = per * (warm + args.api_calls)
    rows = []
    for k, (name, dtype, compiled, replicas) in enumerate(configs):
        chunk = [variant(sources, i, seed=1 + k) for i in range(need)]  # set 0 is the cli's
        row: dict[str, Any] = {"config": name, "pages_per_call": per}
        ocr = None
        try:
            t0 = time.perf_counter()
            ocr = vision.ocr_predictor(device=args.device, dtype=dtype, compile=compiled, replicas=replicas)
            row["build_s"] = round(time.perf_counter() - t0, 2)
            times = []
            profile = cProfile.Profile() if args.profile else None
            for c in range(warm + args.api_calls):
                _sync(args.device)
                t = time.perf_counter()
                if profile is not None and c >= warm:
                    profile.enable()
                ocr(chunk[c * per:(c + 1) * per])
                _sync(args.device)
                if profile is not None and c >= warm:
                    profile.disable()
                times.append(time.perf_counter() - t)
            if profile is not None:  # the measured calls only
                args.profile.mkdir(parents=True, exist_ok=True)
                profile.dump_stats(args.profile / f"api-{name.replace('+', '-').replace(' ', '-')}.prof")
            measured = times[warm:]
            row.update(warmup_s=round(sum(times[:warm]), 2), first_call_s=round(times[0], 3),
                       calls=len(measured), median_call_s=round(sorted(measured)[len(measured) // 2], 4),
                       max_call_s=round(max(measured), 4),
                       pages_per_s=round(per * len(measured) / sum(measured), 1))
        except Exception as exc:  # noqa: BLE001 - reported, the other configurations still run
            row["error"] = f"{type(exc).__name__}: {exc}"
        rows.append(row)
        if ocr is not None:
            ocr.close()
        del ocr
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    return rows


def run_map(args: argparse.Namespace, paths: list[Path]) -> dict[str, Any]:
    import vision
    from vision.app.cli._ocr_bulk import default_jobs

    workers = args.map_workers if args.map_workers is not None else default_jobs(args.device)
    ocr = vision.ocr_predictor(device=args.device)
    warm = paths[: args.per_call]
    list(ocr.map(warm, workers=0))  # compile and kernels, on pages not measured
    rest = paths[args.per_call:]
    _sync(args.device)
    t = time.perf_counter()
    n = sum(len(doc.pages) for doc in ocr.map(rest, workers=workers))
    _sync(args.device)
    seconds = time.perf_counter() - t
    return {"workers": workers, "pages": n, "seconds": round(seconds, 2), "pages_per_s": round(n / seconds, 1)}


def run_f1(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    variants = [("fp32 eager", ["--precision", "fp32", "--no-compile"]), ("device defaults", [])]
    for name, extra in variants:
        cmd = [sys.executable, "-c", CLI, "eval", "ocr", "--data", str(args.data), "--device", args.device, "--json",
               *extra, *(["--limit", str(args.f1_limit)] if args.f1_limit else [])]
        proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=args.timeout)
        try:
            report = json.loads(proc.stdout[proc.stdout.index("{"):])
            e2e = report["end_to_end"]["0.5"]
            rows.append({"config": name, "f1": e2e["f1"], "precision": e2e["precision"], "recall": e2e["recall"],
                         "cer": report.get("cer"), "pages_per_s": report.get("pages_per_s")})
        except (ValueError, KeyError):
            rows.append({"config": name, "rc": proc.returncode, "stderr_tail": proc.stderr[-2000:]})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", "--pages-from", dest="sources", type=Path, action="append", default=None,
                        help="folder of source page images (repeatable); default .carry/pages, "
                        ".carry/thru/funsd_dev/images, else the bundled sample page")
    parser.add_argument("--count", type=int, default=1200, help="pages rendered for the cli step (>= 1000)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--cli", action="append", default=None,
                        help="extra flags of one vision ocr run (repeatable; default: '', '--no-compile', "
                        "'--replicas 12 --jobs 0')")
    parser.add_argument("--harness-args", default="--pages 768 --workers 12 --rungs fp32,bf16+compile")
    parser.add_argument("--api-configs", default="fp32,bf16,bf16+compile", help="API configurations measured")
    parser.add_argument("--api-replicas", type=int, default=0,
                        help="also measure ocr_predictor(replicas=N) (bf16 on CUDA); 0: not")
    parser.add_argument("--per-call", type=int, default=50, help="pages per public API call")
    parser.add_argument("--api-calls", type=int, default=8, help="measured API calls per configuration")
    parser.add_argument("--warmup-calls", type=int, default=2)
    parser.add_argument("--map-workers", type=int, default=None)
    parser.add_argument("--data", type=Path, default=None, help="ground-truth set for the F1 step (funsd_dev)")
    parser.add_argument("--f1-limit", type=int, default=None, help="pages of --data scored (default: all)")
    parser.add_argument("--skip", default="", help=f"comma list of steps to leave out ({', '.join(STEPS)})")
    parser.add_argument("--quick", action="store_true", help="120 pages, 2 API calls, no harness")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per subprocess (a device call "
                        "has 600 in all)")
    parser.add_argument("--render-processes", type=int, default=None, help="default: the CPU count")
    parser.add_argument("--keep", type=Path, default=None, help="render into this folder and keep it")
    parser.add_argument("--profile", type=Path, default=None,
                        help="folder for cProfile stats: each cli command's main process, the measured API calls")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if args.quick:
        args.count, args.api_calls, args.warmup_calls = min(args.count, 120), 2, 1
        args.per_call = min(args.per_call, 20)
        skip.add("harness")
    if not args.device.startswith("cuda"):
        skip.add("harness")
    if args.data is None:
        skip.add("f1")
    cli_variants = args.cli if args.cli is not None else (
        ["", "--no-compile"] if args.quick else ["", "--no-compile", "--replicas 12 --jobs 0"])

    import torch
    from _pages import source_pages, write_pages

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU here: use --device cpu to check the script")
    gpu = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    report: dict[str, Any] = {"benchmark": "ocr_throughput", "machine": f"{gpu}, {os.cpu_count()} CPU cores, "
                              f"torch {torch.__version__}", "device": args.device, "sources": [str(s) for s in _sources(args)]}
    scratch = Path(tempfile.mkdtemp(prefix="ocr-throughput-"))
    try:
        sources = source_pages(_sources(args))
        pages_dir = args.keep or scratch / "pages"
        paths: list[Path] = []
        if {"cli", "map"} - skip:
            t = time.perf_counter()
            paths = write_pages(sources, args.count, pages_dir, seed=0, processes=args.render_processes)
            report["render"] = {"pages": len(paths), "source_pages": len(sources),
                                "seconds": round(time.perf_counter() - t, 1)}
            print(f"[render] {json.dumps(report['render'])}", file=sys.stderr)
        steps = {
            "cli": lambda: [run_cli(pages_dir, scratch, args.device, extra, args.timeout, args.profile)
                            for extra in cli_variants],
            "harness": lambda: run_harness(args, scratch),
            "api": lambda: run_api(args, sources),
            "map": lambda: run_map(args, paths),
            "f1": lambda: run_f1(args),
        }
        for name, step in steps.items():
            if name in skip:
                continue
            t = time.perf_counter()
            try:
                report[name] = step()
            except Exception as exc:  # noqa: BLE001 - one failed step does not lose the others
                report[name] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"[{name}] {time.perf_counter() - t:.1f} s: {json.dumps(report[name])}", file=sys.stderr)
            if args.out:  # a step at a time: a device call cut short keeps the steps it finished
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(report, indent=1) + "\n")
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
