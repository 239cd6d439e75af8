"""The OCR pipeline: options, stages (read, text layer, polarity, orientation, detect, crop, recognize,
layout) and ``ocr_predictor``. The main names are re-exported here, imported on first use."""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "OCROptions": "vision.pipelines.ocr.options",
    "OCRPredictor": "vision.pipelines.ocr.predictor",
    "ocr_predictor": "vision.pipelines.ocr.predictor",
    "build_pipeline": "vision.pipelines.ocr.predictor",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
