"""The born-digital stage: PDF pages that carry a text layer are read from it instead of by OCR.

``pdf_text`` modes:

* ``"auto"``: a page with a non-empty text layer is read from it; any other page goes through OCR.
* ``"ocr"``: every page goes through OCR (use it when a PDF's text layer is known to be wrong or partial).
* ``"layer"``: only text layers are read, never OCR; pages without one come back without words.

A text layer's words are exact (confidence 1.0), and reading them costs no model time at all.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from vision.pipelines.base import PageState
from vision.structures import Word
from vision.structures.geometry import clip_box
from vision.pipelines.ocr.options import PdfTextMode

__all__ = ["PdfTextMode", "PDF_TEXT_MODES", "TextLayerStage"]

PDF_TEXT_MODES: tuple[str, ...] = ("auto", "ocr", "layer")


class TextLayerStage:
    """Fill ``words`` of pages from their text layer and mark them so detection and recognition skip them."""

    def __init__(self, mode: PdfTextMode = "auto") -> None:
        if mode not in PDF_TEXT_MODES:
            raise ValueError(f"pdf_text must be one of {PDF_TEXT_MODES}, got {mode!r}")
        self.mode = mode

    def __call__(self, states: list[PageState]) -> list[PageState]:
        if self.mode == "ocr":
            return states
        for state in states:
            layer = [w for w in state.page.text_layer if w.value.strip()]
            if layer or self.mode == "layer":
                self._fill(state, layer)
        return states

    @staticmethod
    def _fill(state: PageState, layer: list) -> None:
        h, w = state.image.shape[:2]
        state.from_text_layer = True
        state.words = [
            Word(value=t.value.strip(), confidence=1.0, geometry=clip_box(t.geometry)) for t in layer
        ]
        boxes = np.array([word.geometry for word in state.words], dtype=np.float64).reshape(-1, 4)
        state.layout_boxes = boxes * [w, h, w, h]
