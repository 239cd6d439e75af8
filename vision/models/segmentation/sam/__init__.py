"""Segment Anything (SAM): model and the official-checkpoint layout (files are read by
:mod:`vision.predictors.segmentation.checkpoint`; fast paths are :mod:`vision.fast.sam`).

The predictor and the automatic mask generator live in :mod:`vision.predictors.segmentation.predictor`.
"""

from vision.models.segmentation.sam.checkpoint import convert_official, sam_from_state_dict
from vision.models.segmentation.sam.sam import CONFIGS, Sam, SamConfig, SamOutput, build_sam

__all__ = [
    "CONFIGS",
    "Sam",
    "SamConfig",
    "SamOutput",
    "build_sam",
    "convert_official",
    "sam_from_state_dict",
]
