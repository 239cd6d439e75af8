"""The recognition training loop: one process, or one per GPU under ``torchrun`` (DDP).

Under DDP every rank renders its own samples (its DataLoader workers seeded by rank), gradients are averaged,
and ranks take every decision together (:class:`~vision.training.distributed.Dist`): the learning rate
follows rank 0's training clock, synchronised every ``sync_every`` steps (so it is identical on every rank
and the replicas never drift), and so does stopping. Rank 0 validates, logs and writes the checkpoint.
``batch_size`` is per GPU: the global batch is ``batch_size x world``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from vision.training.checkpoint import load_checkpoint, load_matching, save_checkpoint, save_weights
from vision.training.distributed import Dist, setup
from vision.training.echo import Echo
from vision.training.recognition_config import RecognitionTrainConfig
from vision.training.recognition_steps import (
    bench_data,
    bench_step,
    build,
    forward_backward,
    freeze,
    make_optimizer,
    make_renderer,
    prefetch,
    teacher_model,
)
from vision.training.recognition_validation import validate, validate_real
from vision.training.schedule import TimeCosine

__all__ = ["train"]


def train(cfg: RecognitionTrainConfig, out: Path, *, resume: Path | None = None, max_minutes: float = 0.0,
          max_steps: int = 0, bench_seconds: float = 0.0, restart_schedule: bool = False,
          reserve_seconds: float = 45.0, init: Path | None = None, sync_every: int = 25,
          save_minutes: float = 3.0, device: str | None = None) -> dict[str, Any]:
    """Run (or continue) training; returns the last log record (rank 0; other ranks return ``{}``).

    ``init``: a weights file (safetensors) to start from with a fresh optimizer and schedule (fine-tuning); only
    tensors whose names and shapes match are taken (:func:`~vision.training.checkpoint.load_matching`), so a
    related architecture warm-starts from it (the Transformer recognizer from the CRNN's backbone).
    ``save_minutes``: besides each epoch's end, the checkpoint and weights are written whenever this much wall
    time has passed since the last save (0: epoch ends only), so a run killed by its call's time limit keeps
    most of its steps."""
    d = setup(device)
    try:
        return _train(cfg, out, d, resume=resume, max_minutes=max_minutes, max_steps=max_steps,
                      bench_seconds=bench_seconds, restart_schedule=restart_schedule,
                      reserve_seconds=reserve_seconds, init=init, sync_every=sync_every if d.active else 1,
                      save_minutes=save_minutes)
    finally:
        d.close()


def _say(d: Dist, msg: str) -> None:
    if d.main:
        print(msg, flush=True)


def _train(cfg: RecognitionTrainConfig, out: Path, d: Dist, *, resume: Path | None, max_minutes: float,
           max_steps: int, bench_seconds: float, restart_schedule: bool, reserve_seconds: float,
           init: Path | None, sync_every: int, save_minutes: float = 0.0) -> dict[str, Any]:
    from vision.training.synth.word_batches import SyntheticWordBatches, render_fixed_set

    t_start = time.perf_counter()
    device = d.device
    torch.manual_seed(cfg.seed)
    # Batches come in many widths (buckets) and label lengths: cuDNN autotuning would time every new shape,
    # which halves the samples of a short GPU call (docs/models/recognition.md, *Training on several GPUs*).
    torch.backends.cudnn.benchmark = False
    model = build(cfg.arch, cfg.model).to(device).train()
    if cfg.freeze:
        _say(d, f"frozen: {len(freeze(model, cfg.freeze))} parameter tensors ({', '.join(cfg.freeze)})")
    ema = build(cfg.arch, cfg.model).to(device).eval().requires_grad_(False)
    teacher = teacher_model(cfg, device)
    opt = make_optimizer(model, cfg)
    sched = TimeCosine(opt, cfg)
    step, history = 0, []
    if init is not None:
        from safetensors.torch import load_file

        loaded, kept = load_matching(model, load_file(str(init)))
        if not loaded:
            raise ValueError(f"{init} shares no tensor (name and shape) with {cfg.arch}")
        _say(d, f"initialised from {init}: {len(loaded)} tensors loaded, {len(kept)} kept as initialised"
             + (f" ({', '.join(sorted({k.split('.')[0] for k in kept}))})" if kept else ""))
    ema.load_state_dict(model.state_dict())
    if resume is not None:
        state = load_checkpoint(resume, model=model, optimizer=opt, scheduler=sched)
        step, history = state.step, state.extra.get("history", [])
        ema.load_state_dict(state.extra["ema"])
        _say(d, f"resumed {resume} at step {step} ({sched.seconds:.0f} s trained)")
        if restart_schedule:
            sched.restart(step)
    renderer = make_renderer(cfg)
    if cfg.workers > 0:  # render the common glyphs once, in parallel, before the workers fork (see glyphs.py)
        t0 = time.perf_counter()
        n = renderer.prewarm(cfg.workers)
        _say(d, f"glyph prewarm: {n} glyphs in {time.perf_counter() - t0:.1f} s ({cfg.workers} processes)")
    val = render_fixed_set(renderer, cfg.val_size, seed=10**6 + cfg.seed) if d.main else []
    real = None
    if cfg.val_crops and d.main:
        from vision.evaluation.recognition import load_crop_set

        real = load_crop_set(cfg.val_crops)[:2]
    data = SyntheticWordBatches(renderer, cfg.batch_size, cfg.width, cfg.seed, step, cfg.group_batches, rank=d.rank)
    loader = torch.utils.data.DataLoader(
        data, batch_size=None, num_workers=cfg.workers, pin_memory=device.type == "cuda",
        prefetch_factor=prefetch(cfg) if cfg.workers else None, persistent_workers=cfg.workers > 0)
    batches = iter(loader)

    def fresh() -> Any:  # the next generated batch, on the device (echoes reuse it there)
        b = next(batches)
        return b._replace(images=b.images.to(device, non_blocking=True),
                          targets=b.targets.to(device, non_blocking=True))

    stream = Echo(fresh, cfg.echo, cfg.echo_window if cfg.echo > 1 else 1, seed=cfg.seed * 1000 + d.rank)
    use_compile = cfg.compile is True
    if bench_seconds or cfg.compile == "auto":
        data_rate = bench_data(batches, bench_seconds or 5.0, cfg.batch_size)
        step_rate = bench_step(model, next(batches), device, cfg, teacher)
        if d.active:
            _say(d, f"all ranks: generator {d.total(data_rate):.0f} samples/s, steps alone "
                    f"{d.total(step_rate):.0f} samples/s")
        use_compile = use_compile or (cfg.compile == "auto" and device.type == "cuda" and step_rate < data_rate)
        use_compile = bool(d.agree([float(use_compile)])[0])
    _say(d, f"torch.compile: {use_compile}; {d.world} process(es), global batch {cfg.batch_size * d.world}"
            + (f"; echo {cfg.echo} (window {cfg.echo_window})" if cfg.echo > 1 else ""))
    net: torch.nn.Module = model
    if d.active:
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None, gradient_as_bucket_view=True)
    step_fn = torch.compile(net, dynamic=False) if use_compile else net
    ema_params, params = list(ema.parameters()), list(model.parameters())
    out.mkdir(parents=True, exist_ok=True)
    log: dict[str, Any] = {"step": step}
    deadline = t_start + 60 * max_minutes - reserve_seconds if max_minutes else math.inf  # left for val + save
    t_last, seen, loss_sum, wait, pending = time.perf_counter(), 0, torch.zeros((), device=device), 0.0, 0.0
    t_loop, step0 = time.perf_counter(), step
    base_samples = int(history[-1].get("samples", step0 * cfg.batch_size)) if history else step0 * cfg.batch_size
    base_fresh = int(history[-1].get("fresh_samples", base_samples)) if history else base_samples
    stop, t_saved = False, time.perf_counter()

    def save() -> None:  # rank 0: the checkpoint and the EMA weights
        save_checkpoint(out / "checkpoint", model=model, optimizer=opt, scheduler=sched, step=step,
                        config=asdict(cfg), extra={"ema": ema.state_dict(), "history": history})
        save_weights(ema, out / "weights.safetensors", metadata={"arch": cfg.arch, "step": str(step)})

    while True:
        t0 = time.perf_counter()
        batch = next(stream)
        wait += time.perf_counter() - t0
        images = batch.images.float().div_(255)
        try:
            loss = forward_backward(step_fn, images, batch, opt, device, cfg, teacher)
        except Exception as exc:  # a compiler failure (forward or backward) must not cost the GPU window
            if step_fn is net:
                raise
            print(f"torch.compile failed ({type(exc).__name__}: {exc}); continuing eager", flush=True)
            step_fn = net
            loss = forward_backward(net, images, batch, opt, device, cfg, teacher)
        torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        now = time.perf_counter()
        pending += now - t_last
        t_last = now
        save_due = False
        if step % sync_every == 0:  # every rank takes rank 0's clock, stop and save decisions
            clock = time.perf_counter()
            due = float(save_minutes > 0 and clock - t_saved > 60 * save_minutes)
            pending, over, due = d.agree([pending, float(clock > deadline), due])
            sched.step(step, pending)
            pending, stop, save_due = 0.0, stop or over > 0, due > 0
        lr = sched.step(step, 0.0)
        opt.step()
        torch._foreach_lerp_(ema_params, params, 1 - min(cfg.ema_decay, (1 + step) / (10 + step)))
        step += 1
        seen += len(batch.lengths)
        loss_sum += loss.detach()
        done = bool(max_steps and step >= max_steps) or stop
        if step % 200 == 0 or done:
            el = time.perf_counter() - t_start
            rate = (step - step0) * cfg.batch_size / max(time.perf_counter() - t_loop, 1e-9)
            _say(d, f"step {step} loss {loss_sum.item() / 200:.4f} lr {lr:.2e} {seen / el:.0f} samples/s per GPU "
                    f"({rate * d.world:.0f} in all since the loop began"
                    + (f", {rate * d.world / cfg.echo:.0f} generated" if cfg.echo > 1 else "")
                    + f") data-wait {wait / el:.0%}")
            loss_sum.zero_()
        if step % cfg.epoch_steps == 0 or done:
            for b_ema, b in zip(ema.buffers(), model.buffers()):
                b_ema.copy_(b)  # BatchNorm running statistics follow the live model
            if d.main:
                log = {"step": step, "samples": base_samples + (step - step0) * cfg.batch_size * d.world,
                       "fresh_samples": base_fresh + stream.fresh_count * cfg.batch_size * d.world,
                       "train_seconds": sched.seconds,
                       "lr": lr, "world": d.world, **validate(ema, val, device, cfg.width),
                       **(validate_real(ema, real, device, cfg.arch, cfg.width) if real else {})}
                history.append(log)
                print(json.dumps(log), flush=True)
                save()
                (out / "log.json").write_text(json.dumps(history, indent=1))
            d.barrier()
            t_last = t_saved = time.perf_counter()  # validation and saving are not training time
        elif save_due:  # between epochs: the same files, without validation
            if d.main:
                for b_ema, b in zip(ema.buffers(), model.buffers()):
                    b_ema.copy_(b)
                save()
                _say(d, f"step {step}: checkpoint saved")
            d.barrier()
            t_last = t_saved = time.perf_counter()
        if done:
            return log if d.main else {}
