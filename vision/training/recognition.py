"""Train a text recognizer with CTC on synthetic word crops rendered on the fly (resumable, time-boxed).

``python -m vision.training.recognition --config cfg.json [--resume DIR] [--max-minutes 9] [--out DIR]``
(also ``vision train recognition ...``); on several GPUs of one host
``torchrun --nproc_per_node=4 -m vision.training.recognition ...`` (DDP: one process per GPU, each with its own
generator workers; ``batch_size`` is per GPU). bf16 autocast, optional ``torch.compile``, an EMA of the weights
(validated and exported), validation on a fixed synthetic set each epoch, a checkpoint folder (see
``vision.training.checkpoint``) and ``weights.safetensors`` written at every epoch end and when the time
budget runs out, so a run continues across 10-minute GPU calls.

The learning rate follows warm-up + cosine over ``schedule_minutes`` of accumulated training *time* (stored in
the checkpoint), so a fixed GPU budget always ends at the bottom of the schedule whatever the throughput.

With ``teacher`` set, a trained recognizer of the same frame rate (by default the registry's shipped weights
of that architecture) reads every batch too, and the student adds ``distill_weight`` x the frame-level
KL to its teacher (:func:`~vision.training.losses.ctc_distillation`) to the CTC loss on the labels.

``mix`` draws samples from several generators (``vision.training.synth.mix``: document words, multilingual
words, scene text on photos, screen/video overlays, receipts). The loop is in ``recognition_train.py``, its
pieces in ``recognition_steps.py``, the config in ``recognition_config.py``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from vision.training.recognition_config import RecognitionTrainConfig
from vision.training.recognition_steps import forward_backward as _forward_backward  # noqa: F401 (old name)
from vision.training.recognition_steps import freeze
from vision.training.recognition_steps import make_renderer as _renderer  # noqa: F401 (old name)
from vision.training.recognition_train import train
from vision.training.recognition_validation import validate, validate_real
from vision.training.schedule import TimeCosine

__all__ = ["TASK", "RecognitionTrainConfig", "TimeCosine", "add_arguments", "freeze", "load_config", "main", "run",
           "train",
           "validate", "validate_real"]

TASK = "recognition"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``vision train recognition`` / ``python -m vision.training.recognition``."""
    parser.add_argument("--config", default=None, help="JSON file of RecognitionTrainConfig fields")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=JSON", help="override config fields")
    parser.add_argument("--out", default="runs/recognition", help="output folder (checkpoint, weights, log)")
    parser.add_argument("--resume", default=None, help="checkpoint folder to continue from")
    parser.add_argument("--max-minutes", type=float, default=0.0, help="wall-clock budget (0: none)")
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: none)")
    parser.add_argument("--bench-data", type=float, default=0.0, help="first time the generator for N s")
    parser.add_argument("--init", default=None, help="weights file (safetensors) to start from (tensors of matching name and shape)")
    parser.add_argument("--restart-schedule", action="store_true",
                        help="on --resume, start a new warm-up + cosine schedule (fine-tuning)")
    parser.add_argument("--reserve-seconds", type=float, default=45.0,
                        help="seconds of --max-minutes kept for the final validation and save")
    parser.add_argument("--save-minutes", type=float, default=3.0,
                        help="also write the checkpoint every this many minutes between epochs (0: epoch ends only)")
    parser.add_argument("--sync-every", type=int, default=25,
                        help="under torchrun: steps between agreeing on the clock and on stopping")
    parser.add_argument("--device", default=None, help="cpu to train on the CPU (DDP over gloo) with a GPU present")


def load_config(path: str | Path | None, sets: Sequence[str] = ()) -> RecognitionTrainConfig:
    """A :class:`RecognitionTrainConfig` from a JSON file with ``KEY=JSON`` overrides (``--set``) applied."""
    values: dict[str, Any] = json.loads(Path(path).read_text()) if path else {}
    for item in sets:
        key, _, raw = item.partition("=")
        values[key] = json.loads(raw)
    known = {f.name for f in fields(RecognitionTrainConfig)}
    unknown = set(values) - known
    if unknown:
        raise SystemExit(f"unknown config fields: {sorted(unknown)}")
    for key in ("fonts", "freeze"):  # JSON lists -> the dataclass's tuples
        if key in values:
            values[key] = tuple(values[key])
    return RecognitionTrainConfig(**values)


def run(args: argparse.Namespace) -> int:
    """Entry point shared by the CLI and ``python -m``."""
    cfg = load_config(args.config, args.set)
    train(cfg, Path(args.out), resume=Path(args.resume) if args.resume else None, max_minutes=args.max_minutes,
          max_steps=args.max_steps, bench_seconds=args.bench_data, restart_schedule=args.restart_schedule,
          reserve_seconds=args.reserve_seconds, init=Path(args.init) if args.init else None,
          sync_every=args.sync_every, save_minutes=args.save_minutes, device=args.device)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.training.recognition", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
