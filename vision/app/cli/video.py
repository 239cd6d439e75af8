"""``vision video INPUT... -o OUTDIR``: text timelines (JSON, SRT, WebVTT, text) from videos and folders.

Files named on the command line are read whatever their extension (FFmpeg decides what it decodes);
folders contribute the files whose extension is a known video one (:data:`VIDEO_SUFFIXES`), and their
subfolders with ``--recursive``. Outputs go to ``OUTDIR/<path relative to the folder given>.<format>``
(``clip.mp4`` -> ``clip.mp4.srt``). Runs resume: videos whose outputs all exist are skipped, and outputs
are written atomically (see :mod:`vision.pipelines.video.outputs`). A broken video is reported and
skipped; the exit code is 1 when any video failed, else 0.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from vision.app.cli._common import add_limit_arguments, limits_from_args, scan_inputs
from vision.errors import VisionError
from vision.pipelines.video.pipeline import VideoOCR, VideoOptions, VideoResult
from vision.pipelines.video.outputs import (
    FORMATS,
    complete_from_json,
    missing_outputs,
    remove_partials,
    write_outputs,
)

__all__ = [
    "register",
    "run",
    "config_from_args",
    "VideoJob",
    "collect_jobs",
    "predictor_factory",
    "VIDEO_SUFFIXES",
]

VIDEO_SUFFIXES = frozenset(
    {
        ".mp4",
        ".m4v",
        ".mov",
        ".mkv",
        ".webm",
        ".avi",
        ".wmv",
        ".asf",
        ".flv",
        ".f4v",
        ".mpg",
        ".mpeg",
        ".m2v",
        ".ts",
        ".mts",
        ".m2ts",
        ".vob",
        ".ogv",
        ".ogg",
        ".3gp",
        ".3g2",
        ".mxf",
        ".dv",
        ".y4m",
        ".nut",
        ".gif",
    }
)


@dataclass(frozen=True)
class VideoJob:
    """One video and the stem its outputs are named after (``OUTDIR/sub/clip.mp4``)."""

    source: Path
    stem: Path


def _formats(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(f.strip().lower() for f in text.split(",") if f.strip()))
    unknown = [f for f in names if f not in FORMATS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"formats must be a comma list of {', '.join(FORMATS)}; got {text!r}"
        )
    return names


def _positive(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
        return value

    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "video",
        help="text timelines (JSON, SRT, WebVTT, text) from videos and folders of videos",
        description="Files named are read whatever their extension; folders contribute files with a video "
        "extension (subfolders too with --recursive). Outputs: OUTDIR/<name relative to the folder>.<fmt>. "
        "Finished videos are skipped, broken ones reported; exit code 1 when any video failed.",
    )
    parser.add_argument("inputs", nargs="+", metavar="INPUT", type=Path, help="video files and folders")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="OUTDIR", help="output folder")
    parser.add_argument(
        "--fps",
        type=_positive(float),
        default=1.0,
        help="frames OCR'd per second of still footage (default 1; with --max-fps 0 and --scene-change, the "
        "probe rate)",
    )
    parser.add_argument(
        "--max-fps",
        type=float,
        default=2.0,
        help="adaptive sampling: probe at this rate (a multiple of --fps) and OCR a probe when the picture "
        "moved since the last OCR'd frame, else at --fps (default 2; 0 or a value <= --fps: plain --fps "
        "sampling; with --scene-change: the probe rate)",
    )
    parser.add_argument(
        "--scene-change",
        action="store_true",
        help="OCR only frames that differ visibly from the last one OCR'd",
    )
    parser.add_argument(
        "--format",
        type=_formats,
        default=FORMATS,
        metavar="LIST",
        help=f"comma list of {','.join(FORMATS)} (default: all)",
    )
    parser.add_argument(
        "--workers",
        type=_positive(int),
        default=2,
        help="videos decoded at once (local) or OCR actors (ray); default 2",
    )
    parser.add_argument(
        "--processes",
        type=_positive(int),
        default=1,
        help="local engine: OCR processes sharing the machine (and GPU), each reading whole videos with its "
        "own models and --workers decoder threads; default 1 (the host side of one process is the limit on a "
        "GPU: see docs/video.md)",
    )
    parser.add_argument(
        "--batch-size", type=_positive(int), default=16, help="frames per OCR batch (default 16)"
    )
    parser.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local threads, or a Ray Data pipeline (local Ray or RAY_ADDRESS / --ray-address)",
    )
    parser.add_argument(
        "--ray-address", default=None, help="Ray cluster to join (default: RAY_ADDRESS or local)"
    )
    parser.add_argument("-r", "--recursive", action="store_true", help="also read the subfolders of folders")
    parser.add_argument(
        "--device", default=None, help="device of the OCR models (default: CUDA when available)"
    )
    parser.add_argument("--decode-device", default="cpu", help="where torchcodec decodes: cpu, cuda or auto")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_limit_arguments(parser)
    parser.set_defaults(func=run)


def collect_jobs(inputs: list[Path], outdir: Path, recursive: bool) -> tuple[list[VideoJob], list[str]]:
    """Videos to process (files as given, folders scanned) and messages for inputs that do not exist."""
    found, problems = scan_inputs(inputs, VIDEO_SUFFIXES, recursive)
    return [VideoJob(path, outdir / rel) for path, rel in found], problems


def predictor_factory(args: argparse.Namespace, processes: int = 1) -> Callable[[], Callable]:
    """A picklable zero-argument callable building the OCR predictor (Ray actors build their own); eager
    models where ``processes`` share the device (``OCROptions.cuda_graphs``)."""
    from vision.pipelines.ocr.predictor import ocr_predictor

    shared = {"cuda_graphs": False} if processes > 1 else {}
    return functools.partial(ocr_predictor, device=args.device, pages_per_batch=args.batch_size, **shared)


class _Bars:
    """A progress bar over the videos and one over the frames of the current (oldest unfinished) video."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.videos = tqdm(total=total, desc="videos", unit="video", position=0, disable=not enabled)
        # mininterval=0: frames arrive a batch at a time, seconds apart; show every step
        self.frames = tqdm(
            desc="frames", unit="frame", position=1, leave=False, mininterval=0, disable=not enabled
        )
        self.running: dict[str, tuple[int, int | None]] = {}  # source -> (frames done, expected)
        self.current: str | None = None

    def started(self, source: str, expected_frames: int | None) -> None:
        self.running[source] = (0, expected_frames)
        if self.current is None:
            self._show(source)

    def advanced(self, source: str, frames: int) -> None:
        done, expected = self.running.get(source, (0, None))
        self.running[source] = (done + frames, expected)
        if source == self.current:
            self.frames.update(frames)

    def finished(self, source: str) -> None:
        self.running.pop(source, None)
        self.videos.update(1)
        if source == self.current or self.current is None:
            self._show(next(iter(self.running), None))

    def _show(self, source: str | None) -> None:
        self.current = source
        done, expected = self.running.get(source, (0, None)) if source else (0, None)
        self.frames.reset(total=expected)
        self.frames.set_description(Path(source).name if source else "frames")
        self.frames.update(done)

    def write(self, message: str) -> None:
        self.videos.write(message, file=sys.stderr)

    def close(self) -> None:
        self.frames.close()
        self.videos.close()


def _local(
    jobs: list[VideoJob], args: argparse.Namespace, config: VideoOptions, bars: _Bars
) -> Iterator[tuple[VideoJob, VideoResult]]:
    if not jobs:  # everything done already: do not build the models
        return
    by_source = {str(job.source): job for job in jobs}
    processes = min(getattr(args, "processes", 1), len(jobs))
    if processes > 1:
        from vision.pipelines.video.pool import VideoProcessPool

        with VideoProcessPool(predictor_factory(args, processes), config, processes=processes) as pool:
            for result in pool.run(list(by_source)):
                yield _written(by_source[result.source], result, args.format)
        return
    pipeline = VideoOCR(predictor_factory(args)(), config)
    for result in pipeline.run(list(by_source), progress=bars):
        yield _written(by_source[result.source], result, args.format)


def _written(job: VideoJob, result: VideoResult, formats: tuple[str, ...]) -> tuple[VideoJob, VideoResult]:
    """Write a finished video's outputs; a write failure becomes the video's error."""
    if result.document is not None:
        try:
            write_outputs(result.document, job.stem, formats)
        except OSError as exc:
            error = VisionError(result.source, f"cannot write outputs ({exc})")
            result = VideoResult(result.source, None, error, result.frames)
    return job, result


def _ray(
    jobs: list[VideoJob], args: argparse.Namespace, config: VideoOptions, bars: _Bars
) -> Iterator[tuple[VideoJob, VideoResult]]:
    from vision.pipelines.video.ray_engine import run_ray

    if not jobs:
        return
    by_source = {str(job.source): job for job in jobs}
    pairs = [(str(job.source), str(job.stem)) for job in jobs]
    for result in run_ray(
        pairs,
        predictor_factory(args),
        config,
        args.format,
        address=args.ray_address,
        workers=args.workers,
        progress=not args.no_progress,
    ):
        yield by_source[result.source], result


def config_from_args(args: argparse.Namespace) -> VideoOptions:
    """The :class:`VideoOptions` of parsed ``vision video`` arguments."""
    max_fps = getattr(args, "max_fps", None)
    return VideoOptions(
        fps=args.fps,
        max_fps=max_fps if max_fps and max_fps > args.fps else None,
        scene_change=args.scene_change,
        batch_size=args.batch_size,
        workers=args.workers,
        decode_device=args.decode_device,
        limits=limits_from_args(args),
    )


def run(args: argparse.Namespace) -> int:
    """Process every video; returns 1 when any input failed, else 0."""
    found, problems = collect_jobs(args.inputs, args.output, args.recursive)
    jobs: dict[Path, VideoJob] = {}  # by output stem; a video named twice (folder and file) runs once
    for job in found:
        if job.stem in jobs and jobs[job.stem].source.resolve() != job.source.resolve():
            print(
                f"error: {jobs[job.stem].source} and {job.source} would write the same outputs {job.stem}.*",
                file=sys.stderr,
            )
            return 2
        jobs.setdefault(job.stem, job)
    todo, skipped = [], 0
    for job in jobs.values():
        remove_partials(job.stem)
        if not missing_outputs(job.stem, args.format) or complete_from_json(job.stem, args.format):
            skipped += 1
        else:
            todo.append(job)
    config = config_from_args(args)
    bars = _Bars(len(todo), enabled=not args.no_progress)
    for message in problems:
        bars.write(f"error: {message}")
    failed, done = len(problems), 0
    engine = _ray if args.engine == "ray" else _local
    try:
        for _, result in engine(todo, args, config, bars):
            if result.ok:
                done += 1
            else:
                failed += 1
                bars.write(f"error: {result.message}")
            bars.finished(result.source)
    finally:
        bars.close()
    print(f"{done} processed, {skipped} already done, {failed} failed", file=sys.stderr)
    return 1 if failed else 0
