"""Pipelines: small compositions of stages over batches of pages (OCR, video).

    import vision
    ocr = vision.ocr_predictor()          # OCROptions-backed; see vision.pipelines.ocr.predictor
    doc = ocr(pages)                      # vision.structures.Document
    ocr.pipeline                          # read -> text_layer -> detect -> crop -> recognize -> script -> layout

Submodules are imported lazily, so importing one pipeline does not pull in the others' dependencies.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Pipeline": "vision.pipelines.base",
    "PageState": "vision.pipelines.base",
    "OCROptions": "vision.pipelines.ocr.predictor",
    "OCRPredictor": "vision.pipelines.ocr.predictor",
    "ocr_predictor": "vision.pipelines.ocr.predictor",
    "LayoutOptions": "vision.pipelines.ocr.reading_order",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'vision.pipelines' has no attribute {name!r}")
