"""Segment Anything (SAM): model, official-checkpoint loading and the opt-in fast paths.

The predictor and the automatic mask generator live in :mod:`vision.models.segmentation.predictor`.
"""

from vision.models.segmentation.sam.checkpoint import convert_official, load_sam, read_state_dict
from vision.models.segmentation.sam.sam import CONFIGS, Sam, SamConfig, SamOutput, build_sam

__all__ = ["CONFIGS", "Sam", "SamConfig", "SamOutput", "build_sam", "convert_official", "load_sam", "read_state_dict"]
