"""Video text: frame sampling, per-frame OCR, timelines, output files, and the process-pool and Ray engines.
The main names are re-exported here, imported on first use."""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    name: "vision.pipelines.video.pipeline"
    for name in ("VideoOptions", "SceneChange", "FrameSampler", "VideoResult", "VideoProgress", "VideoOCR")
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
