"""The slanted-word rule on synthetic crops: the recognizer's default against ``slanted=False``, same run.

    python benchmarks/slanted_words.py [--n 1500] [--bank .carry/reco]

Renders six synthetic crop sets from the recognition training generators (never evaluation data) with fixed
seeds, and reads each with the shipped recognizer twice: once per crop (``slanted=False``) and with the
sheared second readings of :mod:`vision.predictors.recognition.tilt` (the default). These sets chose that
rule (its gate, the confidence floor, the slopes read):

* ``scene``, ``words``, ``receipt``, ``overlay``: the generators of the recognizer's recipe (stage 8's config),
  32 px high as they train (seeds 7001-7004);
* ``scene_native``: scene words at camera resolution (the generator's crop before its resize to 32 px, as a
  detector or ICDAR 2015 cuts them; seed 7011);
* ``steep_native``: the same, every word rotated up to 35 degrees (``p_steep`` 1; seed 7012).

``--bank`` is the folder of the training assets (``fonts``, ``words``, ``photos``; *Training* in
``docs/models/recognition.md``). Prints case-insensitive word accuracy per set and writes
``benchmarks/results/slanted_words.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import fields
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))

CONFIG = REPO / "configs/recognition/crnn_mobilenet_small/stage8_scene_more.json"
SETS = {  # name: (generator, seed, scene overrides, camera resolution)
    "scene": ("scene", 7001, {}, False),
    "words": ("words", 7002, {}, False),
    "receipt": ("receipt", 7003, {}, False),
    "overlay": ("overlay", 7004, {}, False),
    "scene_native": ("scene", 7011, {"p_steep": 0.15}, True),
    "steep_native": ("scene", 7012, {"p_steep": 1.0}, True),
}


def render(name: str, n: int, bank: Path) -> list[tuple[np.ndarray, str]]:
    """``n`` (crop, text) pairs of set ``name`` (see the module docstring)."""
    from vision.training.recognition_config import RecognitionTrainConfig
    from vision.training.recognition_steps import make_renderer
    from vision.training.synth import scene

    generator, seed, overrides, native = SETS[name]
    cfg = json.loads(CONFIG.read_text())
    cfg.update(fonts=[str(bank / "fonts")], words=str(bank / "words"), photos=str(bank / "photos"),
               mix={generator: 1.0}, generators={"scene": overrides} if overrides else {})
    known = {f.name for f in fields(RecognitionTrainConfig)}
    renderer = make_renderer(RecognitionTrainConfig(**{k: v for k, v in cfg.items() if k in known}))
    finish = scene.finish
    if native:  # keep the camera-resolution crop: the generator's last step only resizes it to 32 px
        scene.finish = lambda img, max_width, height: img
    try:
        rng = np.random.default_rng(seed)
        return [renderer(rng) for _ in range(n)]
    finally:
        scene.finish = finish


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1500, help="crops per set")
    ap.add_argument("--bank", type=Path, default=REPO / ".carry/reco", help="fonts/, words/ and photos/")
    args = ap.parse_args()
    from vision import recognition_predictor

    readers = {"once": recognition_predictor(device="cpu", slanted=False), "slanted": recognition_predictor(device="cpu")}
    rows = {}
    for name in SETS:
        pairs = render(name, args.n, args.bank)
        crops, texts = [np.ascontiguousarray(c) for c, _ in pairs], [t for _, t in pairs]
        row = {}
        for label, reader in readers.items():
            start = time.perf_counter()
            read = reader(crops)
            row[label] = float(np.mean([r.casefold() == t.casefold() for (r, _), t in zip(read, texts)]))
            row[f"{label}_s"] = round(time.perf_counter() - start, 2)
        rows[name] = row
        print(f"{name:<14} once {row['once']:.2%}  slanted {row['slanted']:.2%}  "
              f"({row['once_s']:.1f} / {row['slanted_s']:.1f} s)", flush=True)
    out = REPO / "benchmarks/results/slanted_words.json"
    out.write_text(json.dumps({"n": args.n, "sets": rows, "machine": platform.node(),
                               "cpus": __import__("os").cpu_count()}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
