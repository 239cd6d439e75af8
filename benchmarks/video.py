"""Video OCR throughput: the batched video pipeline beside the frame-by-frame baseline, in one run.

    python benchmarks/video.py --mode cpu    # one 60 s 720p video sampled at 1 fps (the 2-core CPU figure)
    python benchmarks/video.py --mode gpu    # 60 s 1080p videos sampled at 2 fps, models on CUDA

Videos are generated and cached under ``--video-dir`` (30 fps H.264, libx264 defaults: a keyframe every 250
frames): a scrolling colour gradient, a fixed title, a caption changing every 3 s. Rows, over the same videos:

* ``decode only, N thr``: the video pipeline with an OCR that returns empty pages: what N decoder threads
  deliver (torchcodec decodes each video on one thread), the ceiling for the row below.
* ``video pipeline, N thr``: :class:`~vision.pipelines.video.VideoOCR`: N decoder threads feeding batches of
  ``--batch-size`` frames (mixed across videos) to one predictor, then the timeline merge (``--workers 4,8``).
* ``video pipeline, P proc x 2 thr`` (``--processes P``): :class:`vision.pipelines.video.pool.VideoProcessPool`:
  whole videos spread over P worker processes, each with its own predictor (built and warmed up before the
  clock) and 2 decoder threads, so host-side post-processing runs on P cores; CPU seconds not counted.
* ``frame by frame``: the baseline: decode a frame, OCR it alone, next frame; no threads; the same merge.

``x real time``: seconds of video per second of wall clock (all videos together); ``CPU seconds``: this
process's CPU time, the steadier figure on a shared CPU. Models are warmed up on four frames before any clock
starts; CUDA is synchronized before each clock read. ``captions``: captions shown for two sampling intervals or
more that the timeline found (fuzzy ratio >= 80; trained weights only). Prints a table, writes JSON to
``--out``; the GPU machine set-up is in docs/video.md.
"""

from __future__ import annotations

import argparse
import importlib.metadata
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

MODES = {  # frame size (h, w), sampling fps, videos, model device, frames per batch, decoder threads, ...
    "cpu": {
        "size": (720, 1280),
        "fps": 1.0,
        "videos": 1,
        "device": "cpu",
        "batch_size": 8,
        "workers": "1",
        "det_batch_size": 4,
    },
    "gpu": {
        "size": (1080, 1920),
        "fps": 2.0,
        "videos": 8,
        "device": "cuda",
        "batch_size": 32,
        "workers": "4,8",
        "det_batch_size": 16,
    },
}
WORDS = (
    "ALPHA BRAVO CHARLIE DELTA ECHO FOXTROT GOLF HOTEL INDIA JULIET KILO LIMA MIKE NOVEMBER OSCAR PAPA "
    "QUEBEC ROMEO SIERRA TANGO"
).split()
CAPTION_SECONDS = 3.0


def captions(seconds: float) -> list[tuple[str, float, float]]:
    """``(text, start, end)``: a two-word caption every 3 s."""
    out, t, k = [], 0.0, 0
    while t < seconds:
        out.append(
            (
                f"{WORDS[k % len(WORDS)]} {WORDS[(7 * k + 3) % len(WORDS)]} {k:02d}",
                t,
                min(t + CAPTION_SECONDS, seconds),
            )
        )
        t, k = t + CAPTION_SECONDS, k + 1
    return out


def make_video(path: Path, size: tuple[int, int], seconds: float, rate: int = 30) -> None:
    """Encode the benchmark video frame by frame (never all frames in memory)."""
    import torch
    from PIL import Image, ImageDraw, ImageFont
    h, w = size
    font_path = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
    font = (
        ImageFont.truetype(str(font_path), h // 16)
        if font_path.is_file()
        else ImageFont.load_default(h // 16)
    )
    xs = np.linspace(0, 4 * np.pi, 2 * w, dtype=np.float32)
    row = np.stack([(0.25 + 0.125 * np.sin(xs + p)) * 255 for p in (0.0, 2.0, 4.0)], axis=-1).astype(np.uint8)
    background = np.ascontiguousarray(np.broadcast_to(row, (h, 2 * w, 3)))  # dark gradient, twice as wide
    masks: dict[str, np.ndarray] = {}

    def text_mask(text: str) -> np.ndarray:  # where the title and the caption are drawn
        if text not in masks:
            layer = Image.new("L", (w, h), 0)
            draw = ImageDraw.Draw(layer)
            draw.text((w // 20, h // 12), "VIDEO OCR BENCHMARK", fill=255, font=font)
            draw.text((w // 20, h - h // 5), text, fill=255, font=font)
            masks[text] = np.asarray(layer) > 0
        return masks[text]

    schedule = captions(seconds)

    def frames():  # [rate, 3, H, W] uint8 chunks, one second each
        chunk = torch.empty((rate, 3, h, w), dtype=torch.uint8)
        filled = 0
        for k in range(int(seconds * rate)):
            t = k / rate
            shift = int(k * w / (rate * 8)) % w  # the background scrolls one width in 8 s
            frame = background[:, shift : shift + w].copy()
            frame[text_mask(next(text for text, start, end in schedule if start <= t < end))] = 255
            chunk[filled] = torch.from_numpy(frame).permute(2, 0, 1)
            filled += 1
            if filled == rate:
                yield chunk
                filled = 0
        if filled:
            yield chunk[:filled]

    tmp = path.with_name(f".part-{path.name}")  # keeps the .mp4 suffix: FFmpeg picks the container by it
    try:
        from torchcodec.encoders import Encoder  # torchcodec >= 0.12: streaming encoder
    except ImportError:  # older torchcodec (the GPU machine's 0.11): one call with every frame in memory
        from torchcodec.encoders import VideoEncoder

        VideoEncoder(torch.cat([c.clone() for c in frames()]), frame_rate=rate).to_file(
            str(tmp), codec="libx264", preset="veryfast")
    else:
        encoder = Encoder()
        stream = encoder.add_video(height=h, width=w, frame_rate=rate, codec="libx264", preset="veryfast")
        with encoder.open_file(str(tmp)):
            for chunk in frames():
                stream.add_frames(chunk)
    tmp.replace(path)


def predictor_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``ocr_predictor`` settings of every row."""
    import torch

    return {
        "device": args.device,
        "pages_per_batch": args.batch_size,
        "det_batch_size": args.det_batch_size,
        "dtype": torch.bfloat16 if args.dtype == "bf16" else None,
    }


def build_predictor(args: argparse.Namespace) -> tuple[Any, str]:
    """The OCR predictor (shipped weights unless ``--weights random``, or ``auto`` without them)."""
    from vision.errors import WeightsError
    from vision.pipelines.ocr.predictor import ocr_predictor

    kwargs = predictor_kwargs(args)
    if args.weights != "random":
        try:
            return ocr_predictor(**kwargs), "shipped"
        except WeightsError:
            if args.weights == "default":
                raise
    return ocr_predictor(det_weights=None, reco_weights=None, **kwargs), "random"


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def found_captions(timeline: list[Any], seconds: float, interval: float) -> tuple[int, int]:
    """Captions on screen for >= 2 intervals, and how many of them the timeline holds."""
    from rapidfuzz import fuzz

    shown = [text for text, start, end in captions(seconds) if end - start >= 2 * interval]
    read = [entry.text.upper() for entry in timeline]
    return sum(any(fuzz.ratio(text, r) >= 80 for r in read) for text in shown), len(shown)


def _null_predictor(pages: list[Any]) -> Any:
    """Stands in for the OCR in the decode-only row: an empty page per frame."""
    from vision.structures import Document, Page

    return Document(pages=[Page(page_idx=p.index, dimensions=p.size, timestamp=p.timestamp) for p in pages])


def run_rows(
    paths: list[Path], predictor: Any, args: argparse.Namespace, seconds: float
) -> list[dict[str, Any]]:
    """Time every row over the same videos; see the module docstring."""
    from vision.io import DocumentFile
    from vision.pipelines.video.timeline import video_document
    from vision.pipelines.video.pipeline import VideoOCR, VideoOptions

    total = seconds * len(paths)
    rows = []

    def row(
        name: str, clock: tuple[float, float], frames: int, timelines: list[list[Any]] | None, interval: float
    ) -> dict[str, Any]:
        _sync(args.device)
        wall, cpu = time.perf_counter() - clock[0], time.process_time() - clock[1]
        found = [found_captions(t, seconds, interval) for t in timelines] if timelines else []
        return {
            "row": name,
            "seconds": round(wall, 3),
            "cpu_seconds": round(cpu, 3),  # all threads of this process: the cost on a shared CPU
            "frames": frames,
            "frames_per_s": round(frames / wall, 2),
            "x_real_time": round(total / wall, 2),
            "captions_found": sum(f for f, _ in found) if found else None,
            "captions_shown": sum(s for _, s in found) if found else None,
        }

    def start() -> tuple[float, float]:
        _sync(args.device)
        return time.perf_counter(), time.process_time()

    def pool_row(processes: int, config: VideoOptions) -> None:
        """Whole videos spread over worker processes, each with its own predictor (built before the clock)."""
        import functools

        from vision.pipelines.video.pool import VideoProcessPool, warmed_ocr_predictor

        kwargs = predictor_kwargs(args)
        if args.weights_used == "random":
            kwargs |= {"det_weights": None, "reco_weights": None}
        factory = functools.partial(warmed_ocr_predictor, warmup_size=args.size, **kwargs)
        with VideoProcessPool(factory, config, processes=processes) as pool:
            clock = start()
            results = list(pool.run(paths))
            if failed := [r.message for r in results if not r.ok]:
                raise SystemExit(f"{processes} processes failed: {failed}")
            timelines = [r.document.timeline for r in results]
            rows.append(row(f"video pipeline, {processes} proc x {config.workers} thr", clock,
                            sum(r.frames for r in results), timelines, config.interval) | {"cpu_seconds": None})

    def pipeline(name: str, model: Any, config: VideoOptions, keep: bool) -> None:
        clock = start()
        results = list(VideoOCR(model, config).run(paths))
        if failed := [r.message for r in results if not r.ok]:
            raise SystemExit(f"{name} failed: {failed}")
        timelines = [r.document.timeline for r in results] if keep else None
        rows.append(row(name, clock, sum(r.frames for r in results), timelines, config.interval))

    for workers in args.workers:
        config = VideoOptions(
            fps=args.fps, batch_size=args.batch_size, workers=workers, decode_device=args.decode_device
        )
        pipeline(f"decode only, {workers} thr", _null_predictor, config, keep=False)
        pipeline(f"video pipeline, {workers} thr", predictor, config, keep=True)
    for processes in args.processes:
        pool_row(processes, VideoOptions(fps=args.fps, batch_size=args.batch_size, workers=2,
                                           decode_device=args.decode_device))

    clock = start()
    timelines, count = [], 0
    for path in paths:
        pages = []
        video = DocumentFile.from_video(path, fps=args.fps, device=args.decode_device)
        for frame in video:
            page = predictor([frame]).pages[0]
            page.image = None
            pages.append(page)
        count += len(pages)
        timelines.append(
            video_document(
                pages, source=str(path), end=video.end, samples=len(pages), interval=1 / args.fps
            ).timeline
        )
    rows.append(row("frame by frame", clock, count, timelines, 1 / args.fps))
    base = rows[-1]["seconds"]
    for r in rows:
        r["speedup_vs_frame_by_frame"] = round(base / r["seconds"], 2)
    return rows


def machine(device: str) -> dict[str, Any]:
    import torch

    cpu = platform.processor()
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    codec = next((d.version for d in importlib.metadata.distributions(name="torchcodec")), None)
    info = {"cpu": cpu, "cores": os.cpu_count(), "torch": torch.__version__, "torchcodec": codec}
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name()
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=sorted(MODES), default="cpu")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each video (default 60)")
    parser.add_argument("--videos", type=int, help="videos processed (default: 1 on cpu, 8 on gpu)")
    parser.add_argument("--fps", type=float, help="sampling rate (default: 1 on cpu, 2 on gpu)")
    parser.add_argument("--batch-size", type=int, help="frames per OCR batch")
    parser.add_argument("--workers", help="decoder threads of the video pipeline; a comma list runs each")
    parser.add_argument("--processes", default="",
                        help="comma list: also run the videos over this many worker processes (2 decoder threads "
                             "each, one predictor each; vision.pipelines.video.pool)")
    parser.add_argument(
        "--det-batch-size", type=int, help="pages per detection forward (default: 4 cpu, 16 gpu)"
    )
    parser.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32", help="model dtype")
    parser.add_argument("--device", help="model device (default: cpu or cuda by mode)")
    parser.add_argument("--decode-device", default="cpu", help="torchcodec decoding device (cpu, cuda, auto)")
    parser.add_argument("--weights", choices=("auto", "default", "random"), default="auto")
    parser.add_argument("--video-dir", type=Path, default=REPO / ".cache" / "bench-video")
    parser.add_argument("--out", type=Path, help="JSON path (default: benchmarks/results/video-<mode>.json)")
    args = parser.parse_args(argv)
    preset = MODES[args.mode]
    for key in ("videos", "fps", "batch_size", "workers", "device", "det_batch_size"):
        if getattr(args, key) is None:
            setattr(args, key, preset[key])
    size = preset["size"]
    args.workers = [int(w) for w in str(args.workers).split(",")]
    args.processes = [int(p) for p in str(args.processes).split(",") if p.strip()]
    args.size = size

    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    args.video_dir.mkdir(parents=True, exist_ok=True)
    video = args.video_dir / f"captions-{size[0]}p-{args.seconds:g}s.mp4"
    if not video.is_file():
        t0 = time.perf_counter()
        make_video(video, size, args.seconds)
        print(f"generated {video} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    predictor, weights = build_predictor(args)
    args.weights_used = weights
    from vision.io import DocumentFile

    warm_up = list(DocumentFile.from_video(video, fps=1.0, max_frames=4))
    predictor(warm_up)  # loads weights, picks kernels, fills caches: outside every clock
    rows = run_rows([video] * args.videos, predictor, args, args.seconds)

    report = {
        "benchmark": "video",
        "mode": args.mode,
        "machine": machine(args.device),
        "weights": weights,
        "video": {
            "height": size[0],
            "width": size[1],
            "seconds": args.seconds,
            "source_fps": 30,
            "codec": "h264 (libx264 veryfast)",
            "count": args.videos,
        },
        "settings": {
            "sample_fps": args.fps,
            "batch_size": args.batch_size,
            "det_batch_size": args.det_batch_size,
            "dtype": args.dtype,
            "workers": args.workers,
            "processes": args.processes,
            "device": args.device,
            "decode_device": args.decode_device,
        },
        "rows": rows,
    }
    print(
        f"\n{args.videos} x {args.seconds:g} s {size[0]}p at {args.fps:g} fps, models on {args.device} "
        f"({weights} weights), {report['machine']['cpu']} x{report['machine']['cores']}"
        + (f", {report['machine']['gpu']}" if "gpu" in report["machine"] else "")
    )
    print("| row | seconds | CPU seconds | frames | frames/s | x real time | vs frame by frame | captions |")
    print("| --- | ------: | ----------: | -----: | -------: | ----------: | ----------------: | -------: |")
    for r in rows:
        caps = f"{r['captions_found']}/{r['captions_shown']}" if r["captions_shown"] is not None else "-"
        cells = (
            r["row"],
            f"{r['seconds']:.2f}",
            "-" if r["cpu_seconds"] is None else f"{r['cpu_seconds']:.1f}",
            r["frames"],
            f"{r['frames_per_s']:.1f}",
            f"{r['x_real_time']:.1f}",
            f"{r['speedup_vs_frame_by_frame']:.2f}",
            caps,
        )
        print("| " + " | ".join(str(c) for c in cells) + " |")
    out = args.out or REPO / "benchmarks" / "results" / f"video-{args.mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
