"""Word generator throughput per DataLoader worker: cold start vs warm, with and without the shared glyph prewarm.

    python benchmarks/synth_throughput.py                      # ft4.json synth settings, carried fonts
    python benchmarks/synth_throughput.py --max-fonts 40 --rounds 1   # quicker, on a busy 2-core machine

Main-process start-up is timed stage by stage (word lists, font coverage, the prewarm pool). Each worker is
then simulated by a process forked from the main one (as DataLoader forks its workers) drawing its own
seeded stream on one core: time to the first sample, samples/s over the first ``--cold`` samples, over the
next ``--warm`` ones, and over a replay of the first ones (every glyph cached: the generator's floor), plus
the cost of collating ``--batch`` samples. The baseline (lazy per-worker glyph cache, as before the prewarm)
and the prewarmed renderer alternate ``--rounds`` times in the same run, so machine noise hits both.
Prints a table and writes JSON to ``benchmarks/results/synth_throughput.json``.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.training.synth.corpus import Corpus, TextSampler
from vision.training.synth.fonts import discover_fonts
from vision.training.synth.word_batches import collate_words
from vision.training.synth.words import WordRenderer, WordSynthConfig


def _worker(renderer: WordRenderer, args: argparse.Namespace, seed: int, queue: mp.Queue) -> None:
    """One simulated DataLoader worker: a fresh stream on one core; puts its timings on ``queue``."""
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[seed % len(os.sched_getaffinity(0))]})
    rng = np.random.default_rng([seed, 0, 0])
    t0 = time.perf_counter()
    first = [renderer(rng)]
    t_first = time.perf_counter() - t0
    first += [renderer(rng) for _ in range(args.cold - 1)]
    t_cold = time.perf_counter() - t0
    t1 = time.perf_counter()
    for _ in range(args.warm):
        renderer(rng)
    t_warm = time.perf_counter() - t1
    rng = np.random.default_rng([seed, 0, 0])
    t2 = time.perf_counter()
    for _ in range(args.cold):
        renderer(rng)
    t_replay = time.perf_counter() - t2
    batch = sorted(first[:args.batch], key=lambda s: s[0].shape[1])
    t3 = time.perf_counter()
    collate_words(batch, renderer.config.max_width)
    t_collate = time.perf_counter() - t3
    queue.put({"first_sample_ms": 1e3 * t_first, "cold_per_s": args.cold / t_cold, "warm_per_s": args.warm / t_warm,
               "replay_per_s": args.cold / t_replay, "collate_us_per_sample": 1e6 * t_collate / len(batch),
               "glyphs_cached": len(renderer.glyphs)})


def _run_worker(renderer: WordRenderer, args: argparse.Namespace, seed: int) -> dict:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_worker, args=(renderer, args, seed, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/recognition/crnn_mobilenet_small/stage5_frozen_anneal.json",
                        help="training config (fonts, words, synth)")
    parser.add_argument("--max-fonts", type=int, default=0, help="use only the first N fonts (0: all)")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="prewarm pool size")
    parser.add_argument("--top-chars", type=int, default=120, help="characters prewarmed per font and size")
    parser.add_argument("--cold", type=int, default=500)
    parser.add_argument("--warm", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=2, help="A/B repetitions (fresh worker streams each)")
    parser.add_argument("--out", default="benchmarks/results/synth_throughput.json")
    args = parser.parse_args()

    cfg = json.loads(Path(args.config).read_text())
    stages: dict[str, float] = {}
    t = time.perf_counter()
    sampler = TextSampler(Corpus.from_dir(cfg["words"]))
    stages["word_lists_s"] = time.perf_counter() - t
    t = time.perf_counter()
    fonts = discover_fonts(cfg["fonts"], include_system=False)
    fonts = fonts[:args.max_fonts] if args.max_fonts else fonts
    synth = WordSynthConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in cfg.get("synth", {}).items()},
                            max_width=cfg.get("width", 256))
    baseline = WordRenderer(fonts, sampler, synth)
    stages["fonts_coverage_s"] = time.perf_counter() - t
    prewarmed = WordRenderer(fonts, sampler, synth)
    t = time.perf_counter()
    glyphs = prewarmed.prewarm(args.processes, top_chars=args.top_chars)
    stages["prewarm_s"] = time.perf_counter() - t
    stages["prewarm_glyphs"] = glyphs
    stages["prewarm_processes"] = args.processes

    rows: dict[str, list[dict]] = {"lazy cache (before)": [], "prewarmed (after)": []}
    for r in range(args.rounds):
        seed = 1000 + r
        rows["lazy cache (before)"].append(_run_worker(baseline, args, seed))
        rows["prewarmed (after)"].append(_run_worker(prewarmed, args, seed))
    keys = ["first_sample_ms", "cold_per_s", "warm_per_s", "replay_per_s", "collate_us_per_sample", "glyphs_cached"]
    table = {name: {k: float(np.median([m[k] for m in ms])) for k in keys} for name, ms in rows.items()}
    base, new = table["lazy cache (before)"], table["prewarmed (after)"]
    ratios = {k: new[k] / base[k] for k in ("cold_per_s", "warm_per_s", "replay_per_s")}

    print(f"fonts {len(fonts)}, start-up: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                                      for k, v in stages.items()))
    print(f"{'variant (one worker, one core)':32s} {'1st ms':>8s} {'cold/s':>8s} {'warm/s':>8s} {'replay/s':>9s} "
          f"{'collate us':>10s} {'glyphs':>8s}")
    for name, m in table.items():
        print(f"{name:32s} {m['first_sample_ms']:8.1f} {m['cold_per_s']:8.0f} {m['warm_per_s']:8.0f} "
              f"{m['replay_per_s']:9.0f} {m['collate_us_per_sample']:10.1f} {m['glyphs_cached']:8.0f}")
    print("after/before: " + ", ".join(f"{k} x{v:.2f}" for k, v in ratios.items()))
    result = {"machine": platform.node(), "cpus": os.cpu_count(), "config": args.config, "fonts": len(fonts),
              "args": vars(args), "startup": stages, "median": table, "ratios": ratios, "rounds": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
