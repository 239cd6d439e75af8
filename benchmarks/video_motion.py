"""Video OCR on moving text: transcript quality and CPU cost on generated pan/zoom, credits and ticker clips.

    python benchmarks/video_motion.py       # 20 s 1280x720 clips, default `vision video` settings
    python benchmarks/video_motion.py --settings default,fps2 --clips pan_zoom

Clips (``benchmarks/motion_clips.py``, ``benchmarks/scroll_clips.py``, cached under ``--video-dir`` with their truth JSON):

* ``pan_zoom``: the camera pans down and zooms in slowly over ``--pages`` pages of ``--data`` (default
  ``../shared/data/funsd_dev``, first five pages), a cut between pages;
* ``credits``: 24 credit lines scrolling up; ``ticker``: a still headline over a news ticker scrolling left.

Each row runs :class:`vision.pipelines.video.VideoOCR` with the settings of ``vision video`` (``default``: the
command's defaults, adaptive sampling between 1 and 2 fps; ``fixed1``: ``--max-fps 0``, 1 fps; ``fps2``:
``--fps 2``; ``scene``: ``--scene-change``) and scores the text output and
the timeline with :func:`vision.evaluation.transcript.score_transcript`: word recall over words fully on
screen >= 1 s, precision, duplicate-line rate, line timing errors (credits, ticker). ``seconds`` is wall
time of the whole video (decode + OCR + merge), ``CPU seconds`` the process's CPU time; the load average
is printed with the machine. Writes JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import motion_clips as mc
import scroll_clips as sc

SETTINGS: dict[str, list[str]] = {  # `vision video` options of each row (the command's defaults otherwise)
    "default": [],
    "fixed1": ["--max-fps", "0"],
    "fps2": ["--fps", "2"],
    "scene": ["--scene-change"],
}


def make_clips(args: argparse.Namespace) -> dict[str, mc.ClipTruth]:
    """Generate (or reuse) the clips; returns their truth by kind."""
    args.video_dir.mkdir(parents=True, exist_ok=True)
    h, w = args.size
    out = {}
    for kind in args.clips:
        tag = f"{kind}-{w}x{h}-{args.seconds:g}s" + (
            f"-{args.pages}p{args.first}" if kind == "pan_zoom" else ""
        )
        video, truth_path = args.video_dir / f"{tag}.mp4", args.video_dir / f"{tag}.json"
        if not (video.is_file() and truth_path.is_file()):
            t0 = time.perf_counter()
            if kind == "pan_zoom":
                pages = mc.funsd_pages(args.data, args.pages, args.first)
                truth = mc.pan_zoom_clip(video, pages, size=args.size, seconds=args.seconds)
            elif kind == "credits":
                truth = sc.credits_clip(video, size=args.size, seconds=args.seconds)
            else:
                truth = sc.ticker_clip(video, size=args.size, seconds=args.seconds)
            truth.save(truth_path)
            print(f"generated {video} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        out[kind] = mc.ClipTruth.load(truth_path)
    return out


def video_config(name: str, args: argparse.Namespace) -> Any:
    """The :class:`VideoOptions` that ``vision video`` builds with the row's options."""
    import argparse as ap

    from vision.app.cli import video as cli

    parser = ap.ArgumentParser()
    cli.register(parser.add_subparsers())
    options = parser.parse_args(["video", "in.mp4", "-o", "out", *SETTINGS[name]])
    if not hasattr(cli, "config_from_args"):  # the command before it had this helper (baseline runs)
        from vision.pipelines.video.pipeline import VideoOptions

        return VideoOptions(
            fps=options.fps,
            scene_change=options.scene_change,
            batch_size=options.batch_size,
            workers=options.workers,
        )
    return cli.config_from_args(options)


def score(doc: Any, truth: mc.ClipTruth) -> dict[str, Any]:
    from vision.evaluation.transcript import score_transcript
    from vision.pipelines.video.outputs import timeline_text

    lines = timeline_text(doc).splitlines()
    entries = [(e.text, e.start, e.end) for e in doc.timeline]
    words = [(w.text, w.seconds) for w in truth.words]
    step = 1.0 / truth.rate
    true_lines = [(v.text, v.first, v.last + step, v.seconds) for v in truth.lines if v.first is not None]
    return score_transcript(lines, entries, words, true_lines).as_dict()


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from vision.pipelines.ocr import ocr_predictor
    from vision.pipelines.video.pipeline import VideoOCR

    clips = make_clips(args)
    predictor = ocr_predictor(device="cpu")
    rows = []
    for name in args.settings:
        config = video_config(name, args)
        for kind, truth in clips.items():
            load = os.getloadavg()[0]
            t0, c0 = time.perf_counter(), time.process_time()
            doc = VideoOCR(predictor, config)(truth.path)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            row = {
                "clip": kind,
                "settings": name,
                "seconds": round(wall, 2),
                "cpu_seconds": round(cpu, 2),
                "frames": len(doc.pages),
                "entries": len(doc.timeline),
                "load_before": round(load, 2),
                "load_after": round(os.getloadavg()[0], 2),
            } | score(doc, truth)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
            if args.keep:  # the document (frames' OCR and timeline) and the timeline as text
                stem = args.video_dir / f"{Path(truth.path).stem}-{name}"
                stem.with_suffix(".json").write_text(doc.to_json())
                stem.with_suffix(".txt").write_text(
                    "".join(f"{e.start:7.2f} {e.end:7.2f}  {e.text}\n" for e in doc.timeline)
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "funsd_dev")
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--first", type=int, default=0, help="first page of --data used")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--size", default="720x1280", help="HxW of the frames")
    parser.add_argument("--clips", default="pan_zoom,credits,ticker")
    parser.add_argument("--settings", default="default", help=f"comma list of {','.join(SETTINGS)}")
    parser.add_argument("--video-dir", type=Path, default=REPO / ".cache" / "bench-video-motion")
    parser.add_argument(
        "--keep", action="store_true", help="write each document (JSON) and timeline (text) beside the videos"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "video-motion.json")
    args = parser.parse_args(argv)
    args.size = tuple(int(v) for v in args.size.split("x"))
    args.clips = [c for c in args.clips.split(",") if c]
    args.settings = [s for s in args.settings.split(",") if s]
    rows = run(args)
    with open("/proc/cpuinfo") as f:
        cpu = next(
            (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), platform.processor()
        )
    report = {
        "benchmark": "video_motion",
        "machine": {"cpu": cpu, "cores": os.cpu_count()},
        "clips": {"seconds": args.seconds, "size": args.size, "pages": args.pages, "data": str(args.data)},
        "rows": rows,
    }
    print(f"\n{args.seconds:g} s clips {args.size[1]}x{args.size[0]}, {cpu} x{os.cpu_count()}")
    print(
        "| clip | settings | seconds | CPU s | frames | entries | word recall | precision | duplicates "
        "| timed lines found | median error | within 1 s | load |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        med = "-" if r["median_timing_error"] is None else f"{r['median_timing_error']:.2f}"
        timed = f"{r['lines_found']}/{r['lines_timed']}" if r["lines_timed"] else "-"
        within = f"{r['within_1s']:.0%}" if r["lines_timed"] else "-"
        print(
            f"| {r['clip']} | {r['settings']} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {r['frames']} "
            f"| {r['entries']} | {r['recall']:.1%} ({r['words_found']}/{r['words_shown']}) "
            f"| {r['precision']:.1%} "
            f"| {r['duplicate_rate']:.1%} ({r['duplicate_lines']}/{r['lines']}) | {timed} | {med} | {within} "
            f"| {r['load_before']:.1f}-{r['load_after']:.1f} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
