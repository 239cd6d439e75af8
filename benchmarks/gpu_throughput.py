"""End-to-end OCR throughput on the GPU: letter-size pages at 150 dpi, one rung per fast path, in one run.

    python benchmarks/gpu_throughput.py [--pages 512] [--workers 4] [--rungs fp32,bf16,bf16+compile,...]

Rungs (cumulative ladder, each beside the fp32 eager baseline measured in the same run):
``fp32`` eager, ``bf16`` eager, ``bf16+compile`` (``torch.compile`` of both models), and
``bf16+compile+int8`` when :mod:`vision.fast` offers int8 for the GPU (skipped, and said so, otherwise).

Pages are the bundled sample invoice (1275 x 1650 px = US letter at 150 dpi, 155 words) shifted by a few
pixels each, so every page differs (``--sources DIR``: the page images of a folder instead). ``--workers N``
runs N processes sharing the GPU, each with its own predictor and a share of the pages: the CPU side (page
decoding, DB post-processing, crops, layout) then uses N cores while kernels from all processes keep the GPU
busy; with ``--server`` the models run in one model server process instead (:mod:`vision.predictors.remote`)
and the N workers do everything else. The clock starts when every worker is
ready (models built and warmed up, compilation excluded) and stops when the last page is done; workers
synchronize CUDA before reporting. ``agreement`` is the end-to-end F1 of a rung's words against the fp32
eager words on the same pages (IoU >= 0.5 and the same text); ``host_cpu_busy`` the share of the host's
cores busy over the timed window (``/proc/stat``). ``--profile FILE`` writes cProfile stats of worker 0's
timed calls. Prints a table; writes JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RUNGS = ("fp32", "bf16", "bf16+compile", "bf16+compile+int8")


def letter_pages(n: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` variants of the sample page (1650 x 1275 x 3 uint8), each shifted by up to 24 px. The shipped
    PNG is read (drawing it again needs the DejaVu fonts, which GPU images may lack)."""
    from PIL import Image

    from vision.assets.make_sample import SAMPLE_PATH, render_sample

    base = np.asarray(Image.open(SAMPLE_PATH).convert("RGB")) if SAMPLE_PATH.is_file() else np.asarray(
        render_sample()[0])
    rng = np.random.default_rng(seed)
    pages = []
    for _ in range(n):
        dy, dx = (int(v) for v in rng.integers(-24, 25, size=2))
        page = np.full_like(base, 255)
        src = base[max(0, -dy) : base.shape[0] - max(0, dy), max(0, -dx) : base.shape[1] - max(0, dx)]
        page[max(0, dy) : max(0, dy) + src.shape[0], max(0, dx) : max(0, dx) + src.shape[1]] = src
        pages.append(page)
    return pages


def source_pages(folder: Path, n: int) -> list[np.ndarray]:
    """``n`` pages read from the image files of ``folder`` (sorted; cycled when it holds fewer), RGB uint8."""
    import cv2

    files = sorted(p for p in Path(folder).iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg", ".tif"))
    if not files:
        raise SystemExit(f"no page images in {folder}")
    return [cv2.cvtColor(cv2.imread(str(files[i % len(files)])), cv2.COLOR_BGR2RGB) for i in range(n)]


def _int8(model: Any) -> Any:
    from vision.fast.quantize import quantize_int8  # type: ignore[import-not-found]

    from vision import fast  # noqa: F401  (fails cleanly when the package has no fast paths)

    return quantize_int8(model)


def build_predictor(rung: str, args: argparse.Namespace) -> Any:
    """The OCR predictor of one rung (models on CUDA)."""
    import torch

    from vision.predictors.detection.predictor import detection_predictor
    from vision.predictors.recognition.predictor import recognition_predictor
    from vision.pipelines.ocr.predictor import ocr_predictor

    weights = None if args.random_weights else "default"
    dtype = torch.bfloat16 if "bf16" in rung else torch.float32
    det = detection_predictor(
        args.det_arch, weights=weights, device=args.device, dtype=dtype, batch_size=args.det_batch_size,
        resize=args.page_resize, channels_last=not args.nchw,
    )
    reco = recognition_predictor(
        args.reco_arch,
        weights=weights,
        device=args.device,
        dtype=dtype,
        batch_size=args.reco_batch_size,
        compile="compile" in rung,
        channels_last=not args.nchw,
        min_rows=args.min_rows,
        slanted=False,  # as ocr_predictor builds it: the pipeline rereads slanted words on photos only
    )
    if "int8" in rung:
        det.model, reco.model = _int8(det.model), _int8(reco.model)
    if "compile" in rung:  # the recognizer compiles itself (and pads batches to one static shape)
        det.model = torch.compile(det.model, dynamic=False)
    return ocr_predictor(det_predictor=det, reco_predictor=reco, pages_per_batch=args.pages_per_batch)


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _page_words(docs: list[Any]) -> list[list[tuple[tuple[float, ...], str]]]:
    """Per page, ``(box, text)`` of its words."""
    return [[(w.geometry, w.value) for w in page.words] for doc in docs for page in doc.pages]


def _worker(rank: int, rung: str, args: argparse.Namespace, ready: Any, start: Any, queue: Any,
            client: Any = None) -> None:
    import cv2
    import torch

    torch.set_num_threads(1)  # one core per worker: N workers share the host's cores without oversubscribing
    cv2.setNumThreads(1)
    if client is not None:  # --server: the models run in the model server, this process does the rest
        from vision.predictors.remote import install

        install(client)
    try:
        predictor = build_predictor(rung, args)
        pages = (source_pages(args.sources, args.pages) if args.sources else letter_pages(args.pages, seed=0))[
            rank :: args.workers]
        for _ in range(args.warmup):
            predictor(pages[: args.pages_per_batch])
        _sync(args.device if client is None else "cpu")  # a server's worker has no CUDA context
        ready.wait()
        start.wait()
        profile = None
        if args.profile is not None and rank == 0:
            import cProfile

            profile = cProfile.Profile()
            profile.enable()
        t0 = time.perf_counter()
        docs = [
            predictor(pages[i : i + args.pages_per_batch]) for i in range(0, len(pages), args.pages_per_batch)
        ]
        _sync(args.device if client is None else "cpu")  # a server's worker has no CUDA context
        seconds = time.perf_counter() - t0
        if profile is not None:
            profile.disable()
            profile.dump_stats(str(args.profile))
        words = _page_words(docs)
        queue.put(
            (
                rank,
                {
                    "seconds": seconds,
                    "pages": len(pages),
                    "words": words,
                    "peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9
                    if args.device != "cpu" and client is None else 0.0,
                },
            )
        )
    except Exception as exc:  # reported by the parent with the rung that failed
        ready.abort()
        queue.put((rank, {"error": f"{type(exc).__name__}: {exc}"}))


def run_rung(rung: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one rung in ``args.workers`` fresh processes; aggregate pages/s from the slowest worker."""
    ctx = mp.get_context("spawn")
    ready, start, queue = ctx.Barrier(args.workers + 1), ctx.Barrier(args.workers + 1), ctx.Queue()
    server = None
    if args.server:
        from vision.predictors.remote import ModelServer

        server = ModelServer(args.device, args.workers, threads=args.server_threads)
    procs = [
        ctx.Process(target=_worker, args=(r, rung, args, ready, start, queue, server and server.client(r)))
        for r in range(args.workers)
    ]
    for p in procs:
        p.start()
    try:
        ready.wait()
        busy0 = _cpu_ticks()
        start.wait()
    except Exception:  # a worker failed while building: collect its error below
        busy0 = None
    results = dict(queue.get() for _ in procs)
    busy1 = _cpu_ticks()
    for p in procs:
        p.join()
    if server is not None:
        server.close()
    errors = [r["error"] for r in results.values() if "error" in r]
    if errors:
        return {"rung": rung, "error": errors[0]}
    seconds = max(r["seconds"] for r in results.values())
    pages = sum(r["pages"] for r in results.values())
    words = [results[r]["words"] for r in sorted(results)]
    cpu = None
    if busy0 and busy1 and busy1[1] > busy0[1]:
        cpu = round((busy1[0] - busy0[0]) / (busy1[1] - busy0[1]), 3)
    return {
        "rung": rung,
        "pages": pages,
        "seconds": round(seconds, 3),
        "host_cpu_busy": cpu,
        "pages_per_s": round(pages / seconds, 1),
        "peak_mem_gb": round(max(r["peak_mem_gb"] for r in results.values()), 2),
        "_words": words,
    }


def _cpu_ticks() -> tuple[int, int] | None:
    """``(busy, total)`` CPU ticks of the whole host so far (Linux ``/proc/stat``), else ``None``: their
    differences over the timed window give the share of the host's cores that were busy."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def agreement(a: list, b: list) -> float:
    """End-to-end F1 of word lists ``b`` against ``a`` (IoU >= 0.5 and equal text)."""
    from vision.evaluation.metrics import Counts, end_to_end_counts

    total = Counts()
    for wa, wb in zip(a, b):  # workers
        for da, db in zip(wa, wb):  # pages
            boxes_a = np.array([g for g, _ in da]).reshape(-1, 4)
            boxes_b = np.array([g for g, _ in db]).reshape(-1, 4)
            total = total + end_to_end_counts(boxes_a, [t for _, t in da], boxes_b, [t for _, t in db], 0.5)
    return round(total.f1, 4)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=512, help="pages per rung (split over the workers)")
    parser.add_argument("--workers", type=int, default=4, help="processes sharing the GPU")
    parser.add_argument("--rungs", default=",".join(RUNGS), help=f"comma list of {', '.join(RUNGS)}")
    parser.add_argument("--pages-per-batch", type=int, default=64,
                        help="pages per predictor call: the recognizer batches the crops of all of them "
                             "(64: 302.5 vs 279.0 pages/s at 32 on an H100, docs/benchmarks.md)")
    parser.add_argument("--det-batch-size", type=int, default=16)
    parser.add_argument("--reco-batch-size", type=int, default=1024)
    parser.add_argument("--warmup", type=int, default=2, help="warm-up batches per worker (compilation)")
    parser.add_argument("--min-rows", type=int, default=64,
                        help="compiled recognizer batches are padded to a power of two of rows, at least this "
                             "many (--reco-batch-size: every batch padded to the full batch size)")
    parser.add_argument("--nchw", action="store_true",
                        help="keep the models' convolutions NCHW (the predictors' CUDA default is channels-last)")
    parser.add_argument("--page-resize", choices=("host", "device"), default=None,
                        help="where the detector fits pages to its input (default: the predictor's, device on CUDA)")
    parser.add_argument("--sources", type=Path, default=None,
                        help="read the pages from the images of this folder instead of the sample invoice")
    parser.add_argument("--server", action="store_true",
                        help="the models in one model server process, the workers do the rest "
                             "(vision.predictors.remote)")
    parser.add_argument("--server-threads", type=int, default=4, help="requests the model server runs at once")
    parser.add_argument("--profile", type=Path, default=None,
                        help="write cProfile stats of worker 0's timed calls to this file")
    parser.add_argument("--det-arch", default=None)
    parser.add_argument("--reco-arch", default=None)
    parser.add_argument("--random-weights", action="store_true", help="dry run without the shipped weights")
    parser.add_argument("--device", default="cuda", help="cuda (the benchmark); cpu only to check the script")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(os.environ.get("OUT", REPO / "benchmarks" / "results")) / "gpu_throughput.json",
    )
    args = parser.parse_args(argv)

    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("this benchmark needs a CUDA GPU")
    rows = [run_rung(r.strip(), args) for r in args.rungs.split(",") if r.strip()]
    base = next((r for r in rows if r["rung"] == "fp32" and "error" not in r), None)
    base_words = base["_words"] if base is not None else None
    for row in rows:
        if "error" not in row and base is not None:
            row["speedup"] = round(row["pages_per_s"] / base["pages_per_s"], 2)
            row["agreement"] = agreement(base_words, row["_words"])
        words = row.pop("_words", None)
        if words:
            row["words_per_page"] = round(sum(len(page) for w in words for page in w) / row["pages"], 1)
    gpu = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU only"
    machine = f"{gpu}, {os.cpu_count()} CPU cores, torch {torch.__version__}"
    report = {
        "machine": machine,
        "page": f"images of {args.sources}" if args.sources else "1275x1650 (letter, 150 dpi), 155 words",
        "workers": args.workers,
        "model_server": args.server,
        "page_resize": args.page_resize or ("device" if args.device.startswith("cuda") else "host"),
        "channels_last": not args.nchw,
        "pages_per_batch": args.pages_per_batch,
        "weights": "random" if args.random_weights else "default",
        "platform": platform.platform(),
        "rows": rows,
    }
    print(machine)
    print(f"{'rung':<20} {'pages/s':>9} {'speedup':>8} {'agreement':>10} {'peak GB':>8} {'CPU busy':>9}")
    for r in rows:
        if "error" in r:
            print(f"{r['rung']:<20} skipped: {r['error']}")
        else:
            print(
                f"{r['rung']:<20} {r['pages_per_s']:>9.1f} {r.get('speedup', 1.0):>8.2f} "
                f"{r.get('agreement', 1.0):>10.4f} {r['peak_mem_gb']:>8.2f} {r['host_cpu_busy'] or 0:>9.1%}"
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
