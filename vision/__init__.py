"""vision: document OCR and vision pipeline on PyTorch.

Public API (imported lazily so that ``import vision`` stays fast)::

    import vision
    from vision.io import DocumentFile

    doc = vision.ocr_predictor()(DocumentFile.from_pdf("scan.pdf"))
    print(doc.render())
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "ocr_predictor": "vision.pipelines.ocr.predictor",
    "detection_predictor": "vision.predictors.detection.predictor",
    "recognition_predictor": "vision.predictors.recognition.predictor",
    "sam_predictor": "vision.predictors.segmentation.predictor",
    "DocumentFile": "vision.io",
    "Document": "vision.structures",
    "Limits": "vision.settings",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'vision' has no attribute {name!r}")
