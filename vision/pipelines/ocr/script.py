"""The ``script`` stage: flag words (and pages) in a script no shipped recognizer reads.

Runs after ``recognize``: cuts each word's axis-aligned box from the working image, asks the script
classifier (:mod:`vision.predictors.recognition.script`) which writing system it is in, lowers the confidence of
words in another script than Latin, and adds a page warning naming the script when enough of the page is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vision.pipelines.base import PageState
from vision.predictors.recognition.script import (
    ScriptClassifier,
    flag_scripts,
    load_script_classifier,
    script_warning,
)

__all__ = ["ScriptStage"]


class ScriptStage:
    """Pipeline stage (see the module docstring); a no-op when the classifier's weights are absent."""

    def __init__(self, classifier: ScriptClassifier | None = None, lexicon: Any = None) -> None:
        """``lexicon``: words (lower case) whose readings are never flagged: the recognizer's lexicon."""
        self.classifier = classifier or load_script_classifier()
        self.lexicon = lexicon

    def __call__(self, states: list[PageState]) -> list[PageState]:
        if self.classifier is None:
            return states
        for s in states:
            if not s.needs_ocr or not s.texts or s.boxes is None or len(s.boxes) != len(s.texts):
                continue
            h, w = s.image.shape[:2]
            px = np.round(np.asarray(s.boxes, np.float64) * [w, h, w, h]).astype(int)
            crops = []
            for x0, y0, x1, y1 in px:
                x0, y0 = max(0, min(x0, w - 2)), max(0, min(y0, h - 2))
                crops.append(s.image[y0:max(y1, y0 + 2), x0:max(x1, x0 + 2)])
            s.texts, script = flag_scripts(crops, list(s.texts), self.classifier, self.lexicon)
            if script is not None:
                s.warnings.append(script_warning(script))
        return states
