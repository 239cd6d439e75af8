"""The ``curved`` stage: words on arcs read again unbent (``OCROptions.outlines``).

A word set along an arc (a stamp, a seal, a label, an arched sign) reaches the recognizer as its box crop:
letters rising and falling, turned by up to tens of degrees. With outlines on, each word whose outline
follows a circle (:func:`vision.ops.curved.unbend`: not for straight words) is cut again unbent along its
arc and read again; the reading with the higher confidence stays. One recognizer call per batch of pages.
Runs right after ``recognize``, as a model stage (the bulk engine keeps it with the models).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vision.ops.curved import unbend
from vision.pipelines.base import PageState

__all__ = ["CurvedStage"]


class CurvedStage:
    """Read curved words again, unbent (see the module docstring).

    Args:
        predictor: the recognizer (``crops -> [(text, confidence)]``).
    """

    def __init__(self, predictor: Callable[[list[np.ndarray]], list[tuple[str, float]]]) -> None:
        self.predictor = predictor
        self.reread = 0  # words read again, and how many of them changed (for measurement)
        self.changed = 0

    def __call__(self, states: list[PageState]) -> list[PageState]:
        crops, where = [], []
        for k, s in enumerate(states):
            if not s.needs_ocr or s.outlines is None or s.texts is None or len(s.outlines) != len(s.texts):
                continue
            h, w = s.image.shape[:2]
            for i, outline in enumerate(s.outlines):
                crop = unbend(s.image, np.asarray(outline, np.float64) * [w, h])
                if crop is not None:
                    crops.append(crop)
                    where.append((k, i))
        if not crops:
            return states
        self.reread += len(crops)
        for (k, i), (text, conf) in zip(where, self.predictor(crops)):
            s = states[k]
            if text.strip() and conf > s.texts[i][1]:
                s.texts[i] = (text, float(conf))
                self.changed += 1
        return states
