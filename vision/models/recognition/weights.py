"""Weight records of the shipped recognition models (files under ``vision/models/weights``).

Each record's ``meta`` is the model card in data form: parameter count, file size, training recipe, data
and the scores measured with ``vision eval recognition``; ``tests/models/test_recognition_weights.py``
rebuilds each model and checks these facts against the file. ``None`` means no weights ship (yet).
"""

from __future__ import annotations

from vision.models._registry import Weights

__all__ = ["CRNN_MOBILENET_SMALL", "CRNN_TRANSFORMER_SMALL"]

CRNN_MOBILENET_SMALL: Weights | None = None
CRNN_TRANSFORMER_SMALL: Weights | None = None
