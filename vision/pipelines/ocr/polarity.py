"""Polarity stage: pages of light text on a dark background (video frames, slides, screenshots in dark mode)
are inverted before the models see them.

Our detector and recognizer are trained on dark ink on light paper; on light-on-dark pages the detector finds
single glyphs and the recognizer misreads them. The working image is inverted when the page is mostly dark;
geometry is unchanged. The page is marked ``PageState.inverted``: a page the ``photo`` gate then calls a photo
gets its own polarity back before the photo detector reads it (:mod:`vision.pipelines.ocr.photo`), since that
detector and the recognizer learned text of either polarity on natural photographs, where a dark median says
nothing about the text's colour.
"""

from __future__ import annotations

import numpy as np

from vision.pipelines.base import PageState

__all__ = ["PolarityStage", "is_dark"]

_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def is_dark(image: np.ndarray, threshold: float = 110.0, samples: int = 256) -> bool:
    """Whether an ``(H, W, 3)`` uint8 image is mostly dark: median luminance of a strided grid below
    ``threshold`` (0-255). Text covers a small share of a page, so the median is the background's."""
    h, w = image.shape[:2]
    grid = image[:: max(1, h // samples), :: max(1, w // samples), :3].astype(np.float32)
    return float(np.median(grid @ _LUMA)) < threshold


class PolarityStage:
    """Invert the working image of pages that need OCR and are mostly dark (see :func:`is_dark`)."""

    def __init__(self, threshold: float = 110.0) -> None:
        self.threshold = threshold

    def __call__(self, states: list[PageState]) -> list[PageState]:
        for s in states:
            if s.needs_ocr and not s.inverted and is_dark(s.image, self.threshold):
                s.image, s.inverted = 255 - s.image, True
        return states

    def __repr__(self) -> str:
        return f"PolarityStage(threshold={self.threshold})"
