"""Segmentation models: Segment Anything (``sam/``), its predictor and automatic mask generator."""
