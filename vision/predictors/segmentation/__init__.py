"""Segment Anything predictor (prompted masks) and automatic mask generator."""
