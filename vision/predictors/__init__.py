"""Predictors: everything that runs a model.

A predictor owns pre-processing (resizing, normalisation, batching), the device/dtype/backend policy
(:mod:`._device`), the model call and post-processing (decoding into strings, boxes, masks). Models come
from :mod:`vision.models` (tensors in, tensors out); post-build transforms from :mod:`vision.fast`.
"""
