"""Training losses (one module per task)."""

from vision.training.losses.ctc import ctc_loss

__all__ = ["ctc_loss"]
