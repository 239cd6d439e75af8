"""Weight records of the shipped detection models (file under vision/models/weights, sha256, model-card meta)."""

from __future__ import annotations

from vision.models._registry import Weights

__all__ = ["DEFAULT_WEIGHTS"]

DEFAULT_WEIGHTS: dict[str, Weights] = {}
