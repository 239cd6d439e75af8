"""vision.ops: tensor and array operations shared by the models, predictors and pipelines.

The CTC decoding names below load :mod:`vision.ops.ctc` (and torch) on first use, so torch-free modules of
this package (:mod:`vision.ops.median`) import without torch.
"""

from typing import Any

__all__ = ["CTCPath", "ctc_best_path", "stitch_frames"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from vision.ops import ctc

        return getattr(ctc, name)
    raise AttributeError(f"module 'vision.ops' has no attribute {name!r}")
