"""Train a text recognizer with CTC on synthetic word crops rendered on the fly (resumable, time-boxed).

``python -m vision.training.recognition --config cfg.json [--resume DIR] [--max-minutes 9] [--out DIR]``
(also ``vision train recognition ...``). bf16 autocast, optional ``torch.compile``, an EMA of the weights
(validated and exported), validation on a fixed synthetic set each epoch, a checkpoint folder (see
``vision.training.checkpoint``) and ``weights.safetensors`` written at every epoch end and when the time
budget runs out, so a run continues across 10-minute GPU calls.

The learning rate follows warm-up + cosine over ``schedule_minutes`` of accumulated training *time* (stored in
the checkpoint), so a fixed GPU budget always ends at the bottom of the schedule whatever the throughput.

With ``teacher`` set, a trained recognizer of the same frame rate (by default the registry's shipped weights
of that architecture) reads every batch too, and the student adds ``distill_weight`` x the frame-level
KL to its teacher (:func:`~vision.training.losses.ctc_distillation`) to the CTC loss on the labels.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

from vision.models import get_model
from vision.predictors.recognition.preprocess import STRIDE
from vision.training.checkpoint import load_checkpoint, load_matching, save_checkpoint, save_weights
from vision.training.losses import ctc_distillation, ctc_loss
from vision.training.recognition_validation import validate, validate_real
from vision.training.schedule import TimeCosine

__all__ = ["TASK", "RecognitionTrainConfig", "TimeCosine", "add_arguments", "main", "run"]

TASK = "recognition"


@dataclass(frozen=True)
class RecognitionTrainConfig:
    """Everything that defines a run (stored in checkpoints and in the shipped weights' meta)."""

    arch: str = "crnn_mobilenet_small"
    model: dict[str, Any] = field(default_factory=dict)  # builder overrides
    fonts: tuple[str, ...] = (".carry/reco/fonts",)
    words: str = ".carry/reco/words"
    synth: dict[str, Any] = field(default_factory=dict)  # WordSynthConfig overrides
    page_words: float = 0.0  # share of samples cut from whole degraded synthetic pages (synth/page_words.py)
    seed: int = 0
    batch_size: int = 512
    width: int = 256
    lr: float = 2e-3
    weight_decay: float = 0.01
    warmup_steps: int = 300
    schedule_minutes: float = 16.0
    min_lr_ratio: float = 0.02
    ema_decay: float = 0.999
    grad_clip: float = 5.0
    group_batches: int = 1  # >1: batches of similar widths padded to their own bucket (as at inference)
    epoch_steps: int = 2000
    val_size: int = 2048
    val_crops: str | None = None  # a real crop set (``kind: crop``) read each epoch; logged, never trained on
    workers: int = 15
    bf16: bool = True
    compile: bool | str = "auto"  # True, False, or "auto": only when the GPU step is slower than the generator
    freeze: tuple[str, ...] = ()  # submodules kept as loaded (e.g. "backbone"): no updates, BatchNorm stats fixed
    teacher: str | None = None  # an architecture whose trained weights the student distils from (same frames)
    teacher_model: dict[str, Any] = field(default_factory=dict)  # the teacher's builder overrides
    teacher_weights: str | None = None  # safetensors file; None: the teacher architecture's shipped weights
    distill_weight: float = 1.0
    distill_temperature: float = 1.0


def _renderer(cfg: RecognitionTrainConfig):
    from vision.training.synth.corpus import Corpus, TextSampler
    from vision.training.synth.fonts import discover_fonts
    from vision.training.synth.words import WordRenderer, WordSynthConfig

    fonts = discover_fonts(cfg.fonts, include_system=False)
    synth = WordSynthConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in cfg.synth.items()},
                            max_width=cfg.width)
    words = WordRenderer(fonts, TextSampler(Corpus.from_dir(cfg.words)), synth)
    if cfg.page_words <= 0:
        return words
    from vision.training.detection_data import PageWords
    from vision.training.synth.page_words import MixedWords, PageWordCrops
    from vision.training.synth.pages import PageRenderer

    pages = PageWordCrops(PageRenderer(fonts, PageWords(cfg.words)), max_width=cfg.width)
    return MixedWords(words, pages, cfg.page_words)


def _build(arch: str, overrides: dict[str, Any]) -> torch.nn.Module:
    """An untrained ``arch``. If scanning every model family fails on a missing optional package (the GPU
    machine lacks e.g. pyclipper), fall back to registering just the recognition modules."""
    try:
        return get_model(arch, weights=None, **overrides)
    except ImportError:
        import vision.models.recognition.crnn
        import vision.models.recognition.transformer  # noqa: F401
        from vision.models._registry import _REGISTRY

        return _REGISTRY[arch].builder(**overrides)


def _teacher(cfg: RecognitionTrainConfig, device: torch.device) -> torch.nn.Module | None:
    """The frozen teacher of a distillation run (eval mode, no gradients), or ``None`` without one."""
    if cfg.teacher is None:
        return None
    from vision.models._registry import _REGISTRY, load_weights

    model = _build(cfg.teacher, dict(cfg.teacher_model))
    if cfg.teacher_weights is not None:
        state = load_weights(cfg.teacher_weights)
    else:
        shipped = _REGISTRY[cfg.teacher].weights
        if shipped is None:
            raise ValueError(f"teacher {cfg.teacher!r} ships no weights: set teacher_weights")
        state = load_weights(shipped.path, sha256=shipped.sha256)
    model.load_state_dict(state)
    print(f"teacher: {cfg.teacher} ({cfg.teacher_weights or 'shipped weights'}), distill_weight "
          f"{cfg.distill_weight}, temperature {cfg.distill_temperature}", flush=True)
    return model.to(device).eval().requires_grad_(False)


def _prefetch(cfg: RecognitionTrainConfig) -> int:
    """Batches each worker may queue: up to 4, bounded by a quarter of the free shared memory."""
    import shutil

    try:
        free = shutil.disk_usage("/dev/shm").free
    except OSError:
        return 2
    batch_bytes = cfg.batch_size * 3 * 32 * cfg.width
    return int(max(1, min(4, free // 4 // (batch_bytes * max(cfg.workers, 1)))))


def freeze(model: torch.nn.Module, prefixes: tuple[str, ...]) -> list[str]:
    """Keep the submodules named ``prefixes`` as they are: their parameters get no gradient (so the optimizer
    skips them) and they are put in eval mode (BatchNorm running statistics fixed; call it after
    ``model.train()``). Fine-tuning only the sequence encoder and head changes fewer of the readings that
    were already right. Returns the frozen parameter names."""
    modules = dict(model.named_modules())
    unknown = [p for p in prefixes if p not in modules]
    if unknown:
        raise ValueError(f"freeze: no submodule {unknown} in {type(model).__name__}")
    for prefix in prefixes:
        modules[prefix].requires_grad_(False).eval()
    return [n for n, p in model.named_parameters() if not p.requires_grad]


def _optimizer(model: torch.nn.Module, cfg: RecognitionTrainConfig) -> torch.optim.Optimizer:
    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and p.requires_grad]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1 and p.requires_grad]
    return torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.99),
                             fused=torch.cuda.is_available())


def train(cfg: RecognitionTrainConfig, out: Path, *, resume: Path | None = None, max_minutes: float = 0.0,
          max_steps: int = 0, bench_seconds: float = 0.0, restart_schedule: bool = False,
          reserve_seconds: float = 45.0, init: Path | None = None) -> dict[str, Any]:
    """Run (or continue) training; returns the last log record. See the module docstring.

    ``init``: a weights file (safetensors) to start from with a fresh optimizer and schedule (fine-tuning); only
    tensors whose names and shapes match are taken (:func:`~vision.training.checkpoint.load_matching`), so a
    related architecture warm-starts from it (the Transformer recognizer from the CRNN's backbone)."""
    from vision.training.synth.word_batches import SyntheticWordBatches, render_fixed_set

    t_start = time.perf_counter()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(cfg.seed)
    torch.backends.cudnn.benchmark = True  # one fixed input shape: let cuDNN pick its fastest kernels
    model = _build(cfg.arch, cfg.model).to(device).train()
    if cfg.freeze:
        print(f"frozen: {len(freeze(model, cfg.freeze))} parameter tensors ({', '.join(cfg.freeze)})", flush=True)
    ema = _build(cfg.arch, cfg.model).to(device).eval().requires_grad_(False)
    teacher = _teacher(cfg, device)
    opt = _optimizer(model, cfg)
    sched = TimeCosine(opt, cfg)
    step, history = 0, []
    if init is not None:
        from safetensors.torch import load_file

        loaded, kept = load_matching(model, load_file(str(init)))
        if not loaded:
            raise ValueError(f"{init} shares no tensor (name and shape) with {cfg.arch}")
        print(f"initialised from {init}: {len(loaded)} tensors loaded, {len(kept)} kept as initialised"
              + (f" ({', '.join(sorted({k.split('.')[0] for k in kept}))})" if kept else ""), flush=True)
    ema.load_state_dict(model.state_dict())
    if resume is not None:
        state = load_checkpoint(resume, model=model, optimizer=opt, scheduler=sched)
        step, history = state.step, state.extra.get("history", [])
        ema.load_state_dict(state.extra["ema"])
        print(f"resumed {resume} at step {step} ({sched.seconds:.0f} s trained)", flush=True)
        if restart_schedule:
            sched.restart(step)
    renderer = _renderer(cfg)
    if cfg.workers > 0:  # render the common glyphs once, in parallel, before the workers fork (see glyphs.py)
        t0 = time.perf_counter()
        n = renderer.prewarm(cfg.workers)
        print(f"glyph prewarm: {n} glyphs in {time.perf_counter() - t0:.1f} s ({cfg.workers} processes)", flush=True)
    val = render_fixed_set(renderer, cfg.val_size, seed=10**6 + cfg.seed)
    real = None
    if cfg.val_crops:
        from vision.evaluation.recognition import load_crop_set

        real = load_crop_set(cfg.val_crops)[:2]
    loader = torch.utils.data.DataLoader(
        SyntheticWordBatches(renderer, cfg.batch_size, cfg.width, cfg.seed, step, cfg.group_batches), batch_size=None,
        num_workers=cfg.workers, pin_memory=device.type == "cuda", prefetch_factor=_prefetch(cfg) if cfg.workers else None,
        persistent_workers=cfg.workers > 0)
    batches = iter(loader)
    use_compile = cfg.compile is True
    if bench_seconds or cfg.compile == "auto":
        data_rate = _bench_data(batches, bench_seconds or 5.0, cfg.batch_size)
        step_rate = _bench_step(model, next(batches), device, cfg, teacher)
        use_compile = use_compile or (cfg.compile == "auto" and device.type == "cuda" and step_rate < data_rate)
    print(f"torch.compile: {use_compile}", flush=True)
    # Static shapes: batches come in a few bucket widths, one graph each. Inductor's dynamic-width backward of
    # the Transformer fails on an H100 (torch 2.11), and a handful of static graphs compile as fast.
    step_fn = torch.compile(model, dynamic=False) if use_compile else model
    ema_params, params = list(ema.parameters()), list(model.parameters())
    out.mkdir(parents=True, exist_ok=True)
    log = {"step": step}
    deadline = t_start + 60 * max_minutes - reserve_seconds if max_minutes else math.inf  # left for val + save
    t_last, seen, loss_sum, wait = time.perf_counter(), 0, torch.zeros((), device=device), 0.0
    while True:
        t0 = time.perf_counter()
        batch = next(batches)
        wait += time.perf_counter() - t0
        images = batch.images.to(device, non_blocking=True).float().div_(255)
        try:
            loss = _forward_backward(step_fn, images, batch, opt, device, cfg, teacher)
        except Exception as exc:  # a compiler failure (forward or backward) must not cost the GPU window
            if step_fn is model:
                raise
            print(f"torch.compile failed ({type(exc).__name__}: {exc}); continuing eager", flush=True)
            step_fn = model
            loss = _forward_backward(model, images, batch, opt, device, cfg, teacher)
        torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        now = time.perf_counter()
        lr = sched.step(step, now - t_last)
        t_last = now
        opt.step()
        torch._foreach_lerp_(ema_params, params, 1 - min(cfg.ema_decay, (1 + step) / (10 + step)))
        step += 1
        seen += len(batch.lengths)
        loss_sum += loss.detach()
        done = (max_steps and step >= max_steps) or time.perf_counter() > deadline
        if step % 200 == 0 or done:
            el = time.perf_counter() - t_start
            print(f"step {step} loss {loss_sum.item() / 200:.4f} lr {lr:.2e} {seen / el:.0f} samples/s "
                  f"data-wait {wait / el:.0%}", flush=True)
            loss_sum.zero_()
        if step % cfg.epoch_steps == 0 or done:
            for b_ema, b in zip(ema.buffers(), model.buffers()):
                b_ema.copy_(b)  # BatchNorm running statistics follow the live model
            log = {"step": step, "samples": step * cfg.batch_size, "train_seconds": sched.seconds, "lr": lr,
                   **validate(ema, val, device, cfg.width),
                   **(validate_real(ema, real, device, cfg.arch, cfg.width) if real else {})}
            history.append(log)
            print(json.dumps(log), flush=True)
            save_checkpoint(out / "checkpoint", model=model, optimizer=opt, scheduler=sched, step=step,
                            config=asdict(cfg), extra={"ema": ema.state_dict(), "history": history})
            save_weights(ema, out / "weights.safetensors", metadata={"arch": cfg.arch, "step": str(step)})
            (out / "log.json").write_text(json.dumps(history, indent=1))
            t_last = time.perf_counter()  # validation and saving are not training time
        if done:
            return log


def _forward_backward(step_fn: Any, images: torch.Tensor, batch: Any, opt: torch.optim.Optimizer,
                      device: torch.device, cfg: RecognitionTrainConfig,
                      teacher: torch.nn.Module | None = None) -> torch.Tensor:
    """One step's loss and gradients (the optimizer step is the caller's); returns the loss."""
    with torch.autocast(device.type, torch.bfloat16, enabled=cfg.bf16 and device.type == "cuda"):
        logits = step_fn(images)
        if teacher is not None:
            with torch.no_grad():
                taught = teacher(images)
    loss = ctc_loss(logits, batch.targets.to(device, non_blocking=True), batch.lengths,
                    torch.full((len(batch.lengths),), images.shape[-1] // STRIDE, dtype=torch.long))
    if teacher is not None:
        loss = loss + cfg.distill_weight * ctc_distillation(logits, taught, batch.lengths,
                                                            temperature=cfg.distill_temperature)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    return loss


def _bench_data(batches: Any, seconds: float, batch_size: int) -> float:
    """Print how fast the workers alone produce samples (the generator is usually the bottleneck)."""
    next(batches)
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        next(batches)
        n += batch_size
    rate = n / (time.perf_counter() - t0)
    print(f"generator alone: {rate:.0f} samples/s", flush=True)
    return rate


def _bench_step(model: torch.nn.Module, batch: Any, device: torch.device, cfg: RecognitionTrainConfig,
                teacher: torch.nn.Module | None = None) -> float:
    """Print the eager training-step speed on one resident batch (no generator), restoring the weights."""
    state = {k: v.clone() for k, v in model.state_dict().items()}
    opt = _optimizer(model, cfg)
    images = batch.images.to(device).float() / 255
    for i in range(25):
        if i == 5:
            torch.cuda.synchronize() if device.type == "cuda" else None
            t0 = time.perf_counter()
        _forward_backward(model, images, batch, opt, device, cfg, teacher)
        opt.step()
    torch.cuda.synchronize() if device.type == "cuda" else None
    rate = 20 * len(batch.lengths) / (time.perf_counter() - t0)
    print(f"training step alone (eager{', bf16' if cfg.bf16 and device.type == 'cuda' else ''}): {rate:.0f} samples/s", flush=True)
    if device.type == "cuda":  # count host syncs (the ctc_loss length trap) over 3 profiled steps
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(3):  # the training loop's own step: targets uploaded, lengths kept on the host
                _forward_backward(model, images, batch, opt, device, cfg, teacher)
            torch.cuda.synchronize()
        names = [e.name for e in prof.events()]
        dtoh = sum("DtoH" in n or "Device -> Pageable" in n or "Device -> Pinned" in n for n in names)
        syncs = sum(n in ("cudaStreamSynchronize", "cudaDeviceSynchronize") for n in names)
        print(f"profiler over 3 steps: {dtoh} device-to-host copies, {syncs} stream/device syncs", flush=True)
    model.load_state_dict(state)
    return rate


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


def _config(args: argparse.Namespace) -> RecognitionTrainConfig:
    values: dict[str, Any] = json.loads(Path(args.config).read_text()) if args.config else {}
    for item in args.set:
        key, _, raw = item.partition("=")
        values[key] = json.loads(raw)
    known = {f.name for f in fields(RecognitionTrainConfig)}
    unknown = set(values) - known
    if unknown:
        raise SystemExit(f"unknown config fields: {sorted(unknown)}")
    for key in ("fonts", "freeze"):
        if key in values:
            values[key] = tuple(values[key])
    return RecognitionTrainConfig(**values)


def run(args: argparse.Namespace) -> int:
    """Entry point shared by the CLI and ``python -m``."""
    cfg = _config(args)
    train(cfg, Path(args.out), resume=Path(args.resume) if args.resume else None, max_minutes=args.max_minutes,
          max_steps=args.max_steps, bench_seconds=args.bench_data, restart_schedule=args.restart_schedule,
          reserve_seconds=args.reserve_seconds, init=Path(args.init) if args.init else None)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.training.recognition", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
