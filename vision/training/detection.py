"""Train the DBNet text detector (resumable, time-budgeted): ``python -m vision.training.detection -h``.

Data: rendered born-digital PDF pages and synthetic pages, degraded (see
:mod:`vision.training.detection_data`); never the evaluation sets. A run trains for ``max_minutes`` of wall
time minus a reserve, then writes a checkpoint (``OUT/ckpt``, shards under 15 MiB; ``OUT/resume``, the same
in fp16 without optimizer state, to carry between calls), the weights as one
safetensors file (``OUT/det_<arch>.safetensors``) and ``OUT/metrics.json``: validation on held-out PDF
pages, with the post-processing thresholds swept to calibrate ``unclip_ratio`` on our own labels. The
learning rate follows a cosine over ``total_minutes`` of *training* time summed across runs, so a second
call with ``resume`` continues the same schedule.

Several GPUs: ``torchrun --nproc_per_node=N -m vision.training.detection ...`` trains one replica per GPU
(:mod:`vision.training.distributed`, DDP); ``batch_size`` is per GPU, each rank's data workers draw their own
pages, and every ``sync_every`` steps the ranks take rank 0's learning rate and stop decision, so every
replica takes the same steps. Rank 0 logs, checkpoints, validates and writes the weights; a checkpoint
resumes under any world size.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader

from vision.models.detection.dbnet import CONFIGS, DBNet
from vision.training.checkpoint import save_checkpoint, save_weights
from vision.training.detection_data import DataConfig, DetectionStream
from vision.training.distributed import setup
from vision.training.losses.db import db_loss

__all__ = ["TASK", "TrainConfig", "add_arguments", "run", "train", "load_config"]

TASK = "detection"


@dataclass(frozen=True)
class TrainConfig:
    """One training recipe (stored in checkpoints and in the shipped weights' meta)."""

    arch: str = "db_mobilenet_v3_large"
    data: DataConfig = field(default_factory=DataConfig)
    batch_size: int = 32
    lr: float = 2e-3
    weight_decay: float = 1e-4
    warmup_s: float = 20.0
    total_minutes: float = 16.0
    max_minutes: float = 9.0
    reserve_s: float = 75.0
    val_budget_s: float = 45.0
    workers: int = 15
    compile: bool = False
    bf16: bool = True
    seed: int = 0
    log_every: int = 50
    ckpt_every_s: float = 180.0
    max_steps: int = 0
    sync_every: int = 10  # steps between the ranks' agreements on learning rate and stopping (DDP only)
    out_dir: str = "runs/det"
    resume: str = ""
    init: str = ""  # weights (safetensors) to fine-tune from: fresh optimizer and schedule; ignored on resume
    device: str = ""


def load_config(path: str | None, **overrides: Any) -> TrainConfig:
    """A :class:`TrainConfig` from a JSON file (``data`` nested) with non-None ``overrides`` applied."""
    raw = json.loads(Path(path).read_text()) if path else {}
    data = DataConfig(**raw.pop("data", {}))
    cfg = TrainConfig(**raw, data=data)
    data_keys = {f.name for f in dataclasses.fields(DataConfig)}
    top = {k: v for k, v in overrides.items() if v is not None and k not in data_keys}
    sub = {k: v for k, v in overrides.items() if v is not None and k in data_keys}
    return dataclasses.replace(cfg, **top, data=dataclasses.replace(cfg.data, **sub))


def _lr_factor(cfg: TrainConfig, trained_s: float, since_start_s: float) -> float:
    """Warm-up (again after a resume: optimizer moments may restart), then cosine to 2% at total_minutes."""
    warm = min(1.0, (since_start_s + 1.0) / cfg.warmup_s)
    progress = min(1.0, trained_s / (cfg.total_minutes * 60))
    return warm * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * progress)))


def _resume(folder: Path, model: DBNet, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore from a checkpoint folder; when only the weights travelled, restart the optimizer."""
    from safetensors.torch import load_file

    from vision.training.checkpoint import load_checkpoint

    manifest = json.loads((folder / "trainer.json").read_text())
    if all((folder / n).is_file() for n in manifest["optim_files"]):
        state = load_checkpoint(folder, model=model, optimizer=optimizer, rng=False)
        return {**state.extra, "step": state.step, "optimizer": "restored"}
    weights: dict[str, torch.Tensor] = {}
    for name in manifest["model_files"]:
        weights.update(load_file(str(folder / name)))
    model.load_state_dict(weights)
    extra = {k: v for k, v in manifest["trainer"]["extra"].get("__dict__", [])}
    return {**extra, "step": manifest["step"], "optimizer": "restarted"}


def _batch_to(batch: dict[str, torch.Tensor], device: torch.device, model: DBNet) -> tuple[torch.Tensor, ...]:
    """uint8 crops and targets to float tensors on ``device``: normalised images ``[N, 3, H, W]``
    (channels-last) and the four target maps ``[N, 1, H, W]`` (threshold target scaled to [0, 1])."""
    mean = torch.tensor(model.config.mean, device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor(model.config.std, device=device).view(1, 3, 1, 1) * 255
    x = (batch["image"].to(device, non_blocking=True).permute(0, 3, 1, 2).float() - mean) / std
    maps = [
        batch[k].to(device, non_blocking=True).unsqueeze(1).float()
        for k in ("gt", "mask", "thresh", "thresh_mask")
    ]
    maps[2] = maps[2] / 255.0
    return (x.contiguous(memory_format=torch.channels_last), *maps)


def _save(
    cfg: TrainConfig, model: DBNet, opt: torch.optim.Optimizer, step: int, state: dict[str, Any], out: Path
) -> None:
    extra = {
        "trained_s": float(state["trained_s"]),
        "samples": int(state["samples"]),
        "resumes": int(state["resumes"]),
    }
    save_checkpoint(
        out / "ckpt",
        model=model,
        step=step,
        config=dataclasses.asdict(cfg),
        optimizer=opt,
        extra=extra,
        rng=False,
    )


def _save_light(out: Path) -> Path:
    """``OUT/resume``: the checkpoint's manifest and its model shard(s) in fp16 (about 6 MB, no optimizer
    state), small enough to bring back from a GPU call and carry into the next; ``--resume OUT/resume``
    continues the schedule with AdamW restarted behind a warm-up (weights are cast back to fp32 on load)."""
    from safetensors.torch import load_file, save_file

    src, dst = out / "ckpt", out / "resume"
    dst.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((src / "trainer.json").read_text())
    for name in manifest["model_files"]:
        sd = load_file(str(src / name))
        save_file({k: v.half() if v.is_floating_point() else v for k, v in sd.items()}, str(dst / name))
    (dst / "trainer.json").write_text(json.dumps(manifest))
    return dst


def train(cfg: TrainConfig) -> dict[str, Any]:
    """Run one time-budgeted training call; returns the summary also written to ``OUT/metrics.json``."""
    from vision.training.detection_eval import validate

    t_start = time.time()
    dist = setup(cfg.device or None)
    device = dist.device if dist.active or not cfg.device else torch.device(cfg.device)
    torch.manual_seed(cfg.seed)
    torch.backends.cudnn.benchmark = True  # fixed crop size: let cuDNN pick the fastest kernels once
    out = Path(cfg.out_dir)
    if dist.main:
        out.mkdir(parents=True, exist_ok=True)
    model = DBNet(CONFIGS[cfg.arch]).to(device).to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    state: dict[str, Any] = {"step": 0, "trained_s": 0.0, "samples": 0, "resumes": 0}
    if cfg.resume and Path(cfg.resume, "trainer.json").is_file():
        state.update(_resume(Path(cfg.resume), model, opt))
        state["resumes"] = int(state.get("resumes", 0)) + 1
    elif cfg.init:
        from safetensors.torch import load_file

        model.load_state_dict(load_file(cfg.init))  # strict: a fine-tune starts from the whole model
        if dist.main:
            print(f"initialised from {cfg.init}", flush=True)
    step, trained_before = int(state["step"]), float(state["trained_s"])
    replica: torch.nn.Module = model
    if dist.active:
        from torch.nn.parallel import DistributedDataParallel

        replica = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    run_model = torch.compile(replica) if cfg.compile else replica
    loader = DataLoader(
        DetectionStream(cfg.data, seed=cfg.seed * 1000 + int(state["resumes"]), rank=dist.rank),
        batch_size=cfg.batch_size,
        num_workers=cfg.workers,
        pin_memory=device.type == "cuda",
        prefetch_factor=2 if cfg.workers else None,
    )
    budget = cfg.max_minutes * 60 - cfg.reserve_s
    sync = cfg.sync_every if dist.active else 1
    steps_here, t_data, last_ckpt, factor = 0, 0.0, time.time(), 1.0
    model.train()
    with open(out / "train.log", "a") if dist.main else contextlib.nullcontext() as log:
        t_loop = t0 = time.time()
        for batch in loader:
            t_data += time.time() - t0
            if steps_here % sync == 0:  # rank 0's clock decides the learning rate and the stop, for all ranks
                over = time.time() - t_start > budget or bool(cfg.max_steps and steps_here >= cfg.max_steps)
                now = _lr_factor(cfg, float(state["trained_s"]), time.time() - t_loop)
                factor, stop = dist.agree([now, float(over)])
                if stop:
                    break
            for g in opt.param_groups:
                g["lr"] = cfg.lr * factor
            x, gt, mask, thresh, tmask = _batch_to(batch, device, model)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.bf16):
                pred = run_model(x)
            loss, parts = db_loss(pred.logits, pred.thresh, gt, mask, thresh, tmask)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            step, steps_here, t0 = step + 1, steps_here + 1, time.time()
            state["samples"] = int(state["samples"]) + x.shape[0] * dist.world
            state["trained_s"] = trained_before + (t0 - t_loop)
            if log is not None and (step % cfg.log_every == 0 or steps_here == 1):
                line = (
                    f"step {step} loss {loss.item():.4f} prob {parts['prob']:.4f} bin {parts['binary']:.4f} "
                    f"thr {parts['thresh']:.4f} lr {opt.param_groups[0]['lr']:.2e} "
                    f"samples/s {steps_here * cfg.batch_size * dist.world / (t0 - t_loop):.0f} "
                    f"data-wait {t_data / (t0 - t_loop):.2f}"
                )
                print(line, flush=True)
                log.write(line + "\n")
            if dist.main and time.time() - last_ckpt > cfg.ckpt_every_s:
                _save(cfg, model, opt, step, state, out)
                last_ckpt = time.time()
    del loader
    if not dist.main:  # wait for rank 0's weights and validation: ranks leave the group together
        dist.barrier()
        dist.close()
        return {}
    _save(cfg, model, opt, step, state, out)
    _save_light(out)
    weights = save_weights(
        model, out / f"det_{cfg.arch}.safetensors", metadata={"arch": cfg.arch, "step": str(step)}
    )
    seconds = max(t0 - t_loop, 1e-6)
    summary = {
        "arch": cfg.arch,
        "step": step,
        "trained_s": round(float(state["trained_s"]), 1),
        "samples": state["samples"],
        "steps_this_call": steps_here,
        "samples_per_s": round(steps_here * cfg.batch_size * dist.world / seconds, 1),
        "world": dist.world,
        "data_wait_fraction": round(t_data / seconds, 3),
        "optimizer": state.get("optimizer", "new"),
        "weights": weights.name,
        "config": dataclasses.asdict(cfg),
    }
    model.eval()
    summary["validation"] = validate(model, cfg.data, device, budget_s=cfg.val_budget_s)
    summary["wall_s"] = round(time.time() - t_start, 1)
    (out / "metrics.json").write_text(json.dumps(summary, indent=2))
    dist.barrier()
    dist.close()
    return summary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``vision train detection`` / ``python -m vision.training.detection``."""
    parser.add_argument("--config", default=None, help="JSON recipe (TrainConfig fields, 'data' nested)")
    parser.add_argument(
        "--out", dest="out_dir", default=None, help="output folder (checkpoint, weights, metrics)"
    )
    parser.add_argument("--resume", default=None, help="checkpoint folder to continue from")
    parser.add_argument("--init", default=None, help="weights file (safetensors) to fine-tune from")
    parser.add_argument("--max-minutes", type=float, default=None, help="wall-time budget of this call")
    parser.add_argument("--max-steps", type=int, default=None, help="stop after N steps (smoke tests)")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    parser.add_argument("--workers", type=int, default=None, help="data-loader worker processes")
    parser.add_argument("--batch-size", type=int, default=None, help="crops per step")
    parser.add_argument("--crop", type=int, default=None, help="crop size in pixels")
    parser.add_argument(
        "--compile",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="torch.compile the model (default: the config's)",
    )


def run(args: argparse.Namespace) -> int:
    """Train with the recipe in ``--config`` and the command-line overrides."""
    keys = (
        "out_dir",
        "resume",
        "init",
        "max_minutes",
        "max_steps",
        "device",
        "workers",
        "batch_size",
        "crop",
        "compile",
    )
    cfg = load_config(args.config, **{k: getattr(args, k, None) for k in keys})
    summary = train(cfg)
    print(json.dumps({k: v for k, v in summary.items() if k != "config"}, indent=2))
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser(
        prog="python -m vision.training.detection", description=__doc__.splitlines()[0]
    )
    add_arguments(p)
    sys.exit(run(p.parse_args()))
