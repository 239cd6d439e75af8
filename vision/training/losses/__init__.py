"""Training losses (one module per task)."""

from vision.training.losses.ctc import ctc_loss
from vision.training.losses.distill import ctc_distillation

__all__ = ["ctc_distillation", "ctc_loss"]
