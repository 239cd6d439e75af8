"""Pieces of the recognition trainer: model and data builders, optimizer, one training step, validation,
and the generator/step benchmarks (see ``vision.training.recognition``)."""

from __future__ import annotations

import time
from typing import Any

import torch

from vision.models import get_model
from vision.predictors.recognition.preprocess import STRIDE
from vision.training.losses import ctc_distillation, ctc_loss
from vision.training.recognition_config import RecognitionTrainConfig

__all__ = ["bench_data", "bench_step", "build", "forward_backward", "freeze", "make_optimizer", "make_renderer",
           "prefetch", "teacher_model"]


def make_renderer(cfg: RecognitionTrainConfig):
    from vision.training.synth.corpus import Corpus, TextSampler
    from vision.training.synth.fonts import discover_fonts
    from vision.training.synth.words import WordRenderer, WordSynthConfig

    fonts = discover_fonts(cfg.fonts, include_system=False)
    synth = WordSynthConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in cfg.synth.items()},
                            max_width=cfg.width)
    corpus = Corpus.from_dir(cfg.words)
    words = WordRenderer(fonts, TextSampler(corpus, weights=cfg.text_weights), synth)
    if cfg.mix:
        from vision.training.synth.mix import build_mix

        return build_mix(fonts, corpus, cfg.mix, max_width=cfg.width, words=words, photos=cfg.photos,
                         overrides=cfg.generators, text_weights=cfg.text_weights)
    if cfg.page_words <= 0:
        return words
    from vision.training.detection_data import PageWords
    from vision.training.synth.page_words import MixedWords, PageWordCrops
    from vision.training.synth.pages import PageRenderer

    pages = PageWordCrops(PageRenderer(fonts, PageWords(cfg.words)), max_width=cfg.width)
    return MixedWords(words, pages, cfg.page_words)


def build(arch: str, overrides: dict[str, Any]) -> torch.nn.Module:
    """An untrained ``arch``. If scanning every model family fails on a missing optional package (the GPU
    machine lacks e.g. pyclipper), fall back to registering just the recognition modules."""
    try:
        return get_model(arch, weights=None, **overrides)
    except ImportError:
        import vision.models.recognition.crnn
        import vision.models.recognition.transformer  # noqa: F401
        from vision.models._registry import _REGISTRY

        return _REGISTRY[arch].builder(**overrides)


def teacher_model(cfg: RecognitionTrainConfig, device: torch.device) -> torch.nn.Module | None:
    """The frozen teacher of a distillation run (eval mode, no gradients), or ``None`` without one."""
    if cfg.teacher is None:
        return None
    from vision.models._registry import _REGISTRY, load_weights

    model = build(cfg.teacher, dict(cfg.teacher_model))
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


def prefetch(cfg: RecognitionTrainConfig) -> int:
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


def make_optimizer(model: torch.nn.Module, cfg: RecognitionTrainConfig) -> torch.optim.Optimizer:
    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and p.requires_grad]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1 and p.requires_grad]
    return torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.99),
                             fused=torch.cuda.is_available())


def forward_backward(step_fn: Any, images: torch.Tensor, batch: Any, opt: torch.optim.Optimizer,
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


def bench_data(batches: Any, seconds: float, batch_size: int) -> float:
    """Print how fast the workers alone produce samples (the generator is usually the bottleneck)."""
    next(batches)
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        next(batches)
        n += batch_size
    rate = n / (time.perf_counter() - t0)
    print(f"generator alone: {rate:.0f} samples/s", flush=True)
    return rate


def bench_step(model: torch.nn.Module, batch: Any, device: torch.device, cfg: RecognitionTrainConfig,
                teacher: torch.nn.Module | None = None) -> float:
    """Print the eager training-step speed on one resident batch (no generator), restoring the weights."""
    state = {k: v.clone() for k, v in model.state_dict().items()}
    opt = make_optimizer(model, cfg)
    images = batch.images.to(device).float() / 255
    for i in range(25):
        if i == 5:
            torch.cuda.synchronize() if device.type == "cuda" else None
            t0 = time.perf_counter()
        forward_backward(model, images, batch, opt, device, cfg, teacher)
        opt.step()
    torch.cuda.synchronize() if device.type == "cuda" else None
    rate = 20 * len(batch.lengths) / (time.perf_counter() - t0)
    kind = "eager, bf16" if cfg.bf16 and device.type == "cuda" else "eager"
    print(f"training step alone ({kind}): {rate:.0f} samples/s", flush=True)
    if device.type == "cuda":  # count host syncs (the ctc_loss length trap) over 3 profiled steps
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(3):  # the training loop's own step: targets uploaded, lengths kept on the host
                forward_backward(model, images, batch, opt, device, cfg, teacher)
            torch.cuda.synchronize()
        names = [e.name for e in prof.events()]
        dtoh = sum("DtoH" in n or "Device -> Pageable" in n or "Device -> Pinned" in n for n in names)
        syncs = sum(n in ("cudaStreamSynchronize", "cudaDeviceSynchronize") for n in names)
        print(f"profiler over 3 steps: {dtoh} device-to-host copies, {syncs} stream/device syncs", flush=True)
    model.load_state_dict(state)
    return rate
