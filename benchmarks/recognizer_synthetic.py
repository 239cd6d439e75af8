"""Recognizer weight files on a training config's synthetic validation set, read on this machine.

    python benchmarks/recognizer_synthetic.py W1.safetensors [W2 ...] \
        [--config configs/recognition/crnn_mobilenet_small/stage11_enumerations_more.json]

Draws the set the trainer validates on (``val_size`` crops of the config's mix, seed ``10**6 + seed``, from
the bank the config names, e.g. ``.carry/reco``) and reads it greedily with each file in float32, so soups and
fine-tunes of one recipe compare on the same crops without a GPU. Prints word accuracy (both casings) and CER
per file, as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))

DEFAULT_CONFIG = "configs/recognition/crnn_mobilenet_small/stage11_enumerations_more.json"


def main(argv: list[str] | None = None) -> int:
    import torch

    from vision.models import get_model
    from vision.training.recognition import load_config
    from vision.training.recognition_steps import make_renderer
    from vision.training.recognition_validation import validate
    from vision.training.synth.word_batches import render_fixed_set

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("weights", nargs="+", help="safetensors files of the config's architecture")
    ap.add_argument("--config", default=DEFAULT_CONFIG)
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    samples = render_fixed_set(make_renderer(cfg), cfg.val_size, seed=10**6 + cfg.seed)
    for path in args.weights:
        model = get_model(cfg.arch, weights=path, **cfg.model)
        scores = validate(model, samples, torch.device("cpu"), cfg.width)
        print(json.dumps({"weights": path, "config": args.config, "n": len(samples),
                          **{k: round(v, 4) for k, v in scores.items()}}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
