"""``vision ocr --engine ray`` and ``vision ocr --devices cuda:0,cuda:1``: files spread over several model replicas.

``--engine ray`` (:mod:`vision.pipelines.ocr.ray_engine`): read/render tasks on CPUs, OCR in a Ray actor pool
(one GPU per actor when the cluster has GPUs), each document written atomically by the driver as soon as its
last page arrives. ``--devices`` (no Ray): one process per device, each running the bulk engine
(:mod:`vision.pipelines.ocr.bulk`) on the files it takes from a shared queue; ``--replicas N`` starts N such
processes per device (as ``benchmarks/gpu_throughput.py --workers N`` does: host work of N processes keeps
one GPU busy). Both need ``-o`` (outputs are files), report a failed file and go on, and honour ``--resume``
(inputs with an output are dropped before the run).
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing as mp
import sys
from collections.abc import Iterator
from functools import partial
from typing import Any

from tqdm import tqdm

__all__ = ["add_engine_arguments", "auto_replicas", "run_engine", "worker_args"]

ROUNDS = 4
"""Rounds of files each replica should get over a run (:func:`files_in_flight`)."""

FILES_PER_REPLICA = 32
"""Files each automatic replica gets at least: a replica's start-up (seconds) pays off over this many pages."""


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("several model replicas")
    group.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local (this machine: the bulk engine) or ray (a Ray cluster: RAY_ADDRESS, else a "
                       "local instance)")
    group.add_argument("--workers", type=int, default=None, metavar="N",
                       help="--engine ray: OCR actors (default: one per GPU of the cluster; CPU only: one per "
                       "node, on all its cores)")
    group.add_argument("--devices", default=None, metavar="LIST",
                       help="one model replica per device, e.g. cuda:0,cuda:1 (a process each, no Ray)")
    group.add_argument("--replicas", type=int, default=None, metavar="N",
                       help="model processes per device (--devices, else --device): each runs the whole "
                       "pipeline on its share of the files, so host work spreads over N cores per GPU "
                       "(default: 1, or on one CUDA device with -o, 3/4 of the cores within GPU memory, "
                       f"at most one per {FILES_PER_REPLICA} files)")
    group.add_argument("--model-server", action="store_true",
                       help="run the models of each device's processes in one model server process on that "
                       "device (vision.predictors.remote); the processes do all other work")


def auto_replicas(args: argparse.Namespace, files: int) -> int:
    """``--replicas`` when not given: several only for ``-o`` on one CUDA device (no ``--devices``, no Ray).

    A GPU page costs milliseconds of device time and tens of host time (detection post-processing, crops,
    lexicon, layout), so one process keeps the GPU mostly idle; ``benchmarks/ocr_throughput.py`` on an
    H200 (16 cores): 27 pages/s steady with one process, 154 with 12 replicas.
    """
    if args.replicas is not None:
        return max(1, args.replicas)
    if getattr(args, "devices", None) or getattr(args, "engine", "local") != "local" or args.output is None:
        return 1  # decided without importing torch: a Ray driver never needs it
    from vision.pipelines.ocr.replicas import device_replicas

    return device_replicas(args.device, files // FILES_PER_REPLICA)


def build(args: argparse.Namespace, device: str | None = None) -> Any:
    """The command's predictor (on ``device`` when given): what each actor or device process builds."""
    from vision.app.cli.ocr import build_predictor

    if device is not None:
        args = copy.copy(args)
        args.device = device
    return build_predictor(args)


def run_engine(args: argparse.Namespace, jobs: list[Any], failed: int) -> int:
    """Run ``jobs`` on Ray or on ``--devices``; returns the command's exit code."""
    if any(job.output is None for job in jobs):
        print("error: --engine ray and --devices write files: give -o DIR", file=sys.stderr)
        return 2
    bar = tqdm(total=len(jobs), unit="file", desc="ocr", file=sys.stderr, disable=args.no_progress or None)
    try:
        if getattr(args, "engine", "local") == "ray":
            errors = _run_ray(args, jobs, bar)
        else:
            errors = _run_devices(args, jobs, bar)
    finally:
        bar.close()
    return 1 if failed + errors else 0


def _report(bar: Any, source: Any, error: str | None) -> int:
    if error:
        bar.write(f"error: {error}", file=sys.stderr)
    bar.update(1)
    return 1 if error else 0


def _run_ray(args: argparse.Namespace, jobs: list[Any], bar: Any) -> int:
    from vision.app.cli._ocr_bulk import Reader
    from vision.pipelines.ocr.ray_engine import run_ray

    errors = 0
    results = run_ray(jobs, read=Reader(args), factory=partial(build, args),
                      finish=partial(_finish_quiet, args=args), workers=args.workers,
                      pages_per_batch=16, progress=False)
    for job, error in results:
        errors += _report(bar, job.source, error)
    return errors


def _finish_quiet(job: Any, doc: Any, *, args: argparse.Namespace) -> None:
    from vision.app.cli.ocr import finish_job

    finish_job(job, doc, None, args)


def _pull(todo: Any) -> Iterator[Any]:
    """Jobs from the shared queue until its end marker (``None``)."""
    while (job := todo.get()) is not None:
        yield job


def _device_worker(args: argparse.Namespace, device: str, todo: Any, workers: int, events: Any,
                   ahead: int | None = None, client: Any = None) -> None:
    """One replica's process: the bulk engine over the files it takes from the shared queue ``todo`` (a
    replica that is slower, or got a long PDF, takes fewer), at most ``ahead`` in flight; one event per file.
    A replica that cannot build its predictor takes no file and says why (``(None, reason)``): the others
    read them. With ``client`` (``--model-server``) its models run in the model server."""
    import cv2
    import torch

    from vision.app.cli._ocr_bulk import Finisher, Reader
    from vision.errors import VisionError

    torch.set_num_threads(args.threads)  # the host's cores shared by the device processes
    cv2.setNumThreads(args.threads)
    if client is not None:
        from vision.predictors.remote import install

        install(client)
    try:
        predictor = build(args, device)
    except Exception as exc:  # noqa: BLE001 - reported; the other replicas go on
        events.put((None, f"{device}: cannot build the predictor ({exc})"))
        return
    taken: list[Any] = []

    def jobs() -> Iterator[Any]:
        for job in _pull(todo):
            taken.append(job)
            yield job

    if ahead is not None:  # files in flight, hence pages a model batch, for short runs: see `files_in_flight`
        from vision.pipelines.ocr.bulk import default_ahead

        ahead = min(ahead, default_ahead(workers, predictor.options.pages_per_batch))
    results = predictor.map(jobs(), workers=workers, read=Reader(args), finish=Finisher(args),
                            errors="return", ahead=ahead)
    for k, result in enumerate(results):  # in the order taken: result k is taken[k]
        error = None
        if isinstance(result, BaseException):
            error = str(result) if isinstance(result, VisionError) else f"{taken[k].source}: {result}"
        events.put((str(taken[k].source), error))


def files_in_flight(files: int, replicas: int, workers: int) -> int:
    """Files each replica holds at once: enough for :data:`ROUNDS` rounds each over the run, at least
    ``max(8, 2 * workers)``. Replicas take files from one queue ``ahead`` at a time and read one-page files
    in model batches of that many, so with a full batch each (64 pages on a GPU) a run of 1,000 files over
    12 replicas would hand out 768 at once and leave the last few replicas reading the rest alone."""
    return max(8, 2 * workers, -(-files // (replicas * ROUNDS)))


def _default_device() -> str:
    """``"cuda"`` when a CUDA device is there, else ``"cpu"``: from ``nvidia-smi`` when it can tell, so this
    process never imports torch (its replicas do; :mod:`~vision.pipelines.ocr.gpu_memory`)."""
    from vision.pipelines.ocr.gpu_memory import free_bytes

    free = free_bytes(None)
    if free is None:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return "cuda" if free > 0 else "cpu"


def worker_args(args: argparse.Namespace, devices: list[str]) -> argparse.Namespace:
    """The device processes' copy of ``args``: the host's cores shared out, and eager models where several
    processes share a device (``OCROptions.cuda_graphs``)."""
    import os

    args = copy.copy(args)
    args.threads = max(1, (os.cpu_count() or 2) // len(devices))
    shared = len(devices) > len(set(devices)) and not getattr(args, "model_server", False)
    if shared and getattr(args, "cuda_graphs", None) is None:
        args.cuda_graphs = False
    return args


def _model_servers(args: argparse.Namespace, devices: list[str]) -> tuple[list[Any], list[Any]]:
    """With ``--model-server``: one model server per device and each device process's client of it (else no
    server and ``None`` clients)."""
    if not getattr(args, "model_server", False):
        return [], [None] * len(devices)
    from vision.predictors.remote import ModelServer

    servers = {d: ModelServer(d, devices.count(d)) for d in dict.fromkeys(devices)}
    clients = [servers[d].client(devices[:k].count(d)) for k, d in enumerate(devices)]
    return list(servers.values()), clients


def _run_devices(args: argparse.Namespace, jobs: list[Any], bar: Any) -> int:
    import os

    named = [d.strip() for d in (args.devices or "").split(",") if d.strip()]
    named = named or [args.device or _default_device()]
    devices = [d for d in named for _ in range(max(1, args.replicas))]
    ctx = mp.get_context("spawn")
    events = ctx.Queue()
    spare = max(0, (os.cpu_count() or 2) - len(devices))
    workers = args.jobs if args.jobs is not None else min(8, spare // len(devices))
    devices = devices[: len(jobs)]
    todo = ctx.Queue()  # files go to whichever replica is free
    for job in jobs:
        todo.put(job)
    for _ in devices:
        todo.put(None)
    args = worker_args(args, devices)
    ahead = files_in_flight(len(jobs), len(devices), workers)
    servers, clients = _model_servers(args, devices)
    procs = [ctx.Process(target=_device_worker, args=(args, d, todo, workers, events, ahead, client),
                         daemon=False) for d, client in zip(devices, clients)]
    for p in procs:
        p.start()
    errors, seen, reason = 0, 0, None
    try:
        while seen < len(jobs):
            try:
                source, error = events.get(timeout=1.0)
            except Exception:  # noqa: BLE001 - queue.Empty: check that the workers are alive
                if not any(p.is_alive() for p in procs) and events.empty():
                    break
                continue
            if source is None:  # a replica that could not start
                reason = error
                bar.write(f"warning: {error}", file=sys.stderr)
                continue
            seen += 1
            errors += _report(bar, source, error)
    finally:
        for p in procs:
            p.join()
        for server in servers:
            server.close()
    lost = len(jobs) - seen  # no replica left to read them
    for _ in range(lost):
        errors += _report(bar, None, reason or "a device process ended before its files were done")
    return errors
