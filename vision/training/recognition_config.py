"""The recognition trainer's configuration and learning-rate schedule (see ``vision.training.recognition``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["RecognitionTrainConfig"]


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
    echo: int = 1  # optimizer steps per generated batch (vision.training.echo; >1 when the generator bounds)
    echo_window: int = 32  # echoes are drawn from this many recent generated batches
    bf16: bool = True
    compile: bool | str = "auto"  # True, False, or "auto": only when the GPU step is slower than the generator
    freeze: tuple[str, ...] = ()  # submodules kept as loaded (e.g. "backbone"): no updates, BatchNorm stats fixed
    teacher: str | None = None  # an architecture whose trained weights the student distils from (same frames)
    teacher_model: dict[str, Any] = field(default_factory=dict)  # the teacher's builder overrides
    teacher_weights: str | None = None  # safetensors file; None: the teacher architecture's shipped weights
    distill_weight: float = 1.0
    distill_temperature: float = 1.0
    mix: dict[str, float] = field(default_factory=dict)  # generator shares (synth/mix.py); {}: words only
    generators: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-generator config overrides
    text_weights: dict[str, float] = field(default_factory=dict)  # TextSampler.WEIGHTS entries, every generator
    photos: str | None = ".carry/reco/photos"  # prepared photo folder (synth/photos.py) for scene/overlay
