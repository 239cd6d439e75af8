"""The learning-rate schedule of the trainers: warm-up over steps, then cosine over accumulated training time.

Time, not steps: a fixed GPU budget then always ends at the bottom of the schedule whatever the throughput,
and the seconds are stored in the checkpoint so a run continues across calls.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["TimeCosine"]


class TimeCosine:
    """Learning-rate factor: linear warm-up over steps, then cosine over accumulated training seconds."""

    def __init__(self, optimizer: torch.optim.Optimizer, cfg: Any) -> None:
        """``cfg``: a training config with ``lr``, ``warmup_steps``, ``schedule_minutes`` and ``min_lr_ratio``."""
        self.optimizer, self.cfg = optimizer, cfg
        self.seconds = 0.0
        self.first_step = 0  # warm-up counts from here (a restarted schedule warms up again)

    def restart(self, step: int) -> None:
        """Begin a new schedule at ``step`` (fine-tuning from a checkpoint with a new ``lr``)."""
        self.seconds, self.first_step = 0.0, step

    def step(self, step: int, seconds: float) -> float:
        self.seconds += seconds
        progress = min(1.0, self.seconds / (60.0 * self.cfg.schedule_minutes))
        cosine = self.cfg.min_lr_ratio + (1 - self.cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
        lr = self.cfg.lr * min(1.0, (step - self.first_step + 1) / self.cfg.warmup_steps) * cosine
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        return lr

    def state_dict(self) -> dict[str, float]:
        return {"seconds": self.seconds, "first_step": self.first_step}

    def load_state_dict(self, state: dict[str, float]) -> None:
        self.seconds, self.first_step = float(state["seconds"]), int(state.get("first_step", 0))
