"""The ``text_scale`` stage: pages whose words are far larger than the detector was trained on are detected
again, shrunk.

Every page is fitted to the detector's input whatever its content, so the height its words reach there
depends on how the page was taken: a scanned letter page puts body text 10-20 px high in a 1024-px input, a
phone held close to a receipt 30-60 px, the letters of its printer's capitals far apart. The default
detector learned pages fitted at 724-1448 px (:func:`vision.training.detection_data.make_page`); on such
close-ups it cuts words into pieces and skips some. A page whose first pass found words of median height
over :attr:`TextScale.trigger` input pixels is detected again fitted at ``zoom = target / median`` of its
size in the input (at least ``min_zoom``; the rest of the canvas white), and that pass's words replace the
first's. The stage runs before the ``photo`` gate, which then judges a close-up receipt on whole words
rather than on fragments that do not look typeset; pages it calls photos are detected again by the photo
detector at their own size (scenes mix near and far text, and one zoom for the whole picture loses the far
words). Boxes stay relative to the page, so nothing downstream changes. The setting was chosen on
synthetic pages (``docs/pipeline.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vision.pipelines.base import PageState

if TYPE_CHECKING:
    from vision.pipelines.ocr.stages import DetectStage

__all__ = ["TextScale", "TextScaleStage", "zoom_for"]


@dataclass(frozen=True)
class TextScale:
    """When and how far a page is shrunk for the second pass (see the module docstring).

    Attributes:
        trigger: median word height in input pixels above which a page is read again; 0 turns the stage off.
        target: the median height the second pass aims at.
        min_zoom: the smallest fraction of its fitted size a page is shrunk to.
        min_words: pages with fewer words than this keep the first pass (their median says little).
    """

    trigger: float = 32.0
    target: float = 20.0
    min_zoom: float = 0.42
    min_words: int = 5

    def __post_init__(self) -> None:
        if self.trigger < 0 or self.target <= 0 or (self.trigger and self.target > self.trigger):
            raise ValueError(f"need 0 < target <= trigger (or trigger 0: off), got target={self.target}, "
                             f"trigger={self.trigger}")
        if not 0 < self.min_zoom <= 1:
            raise ValueError(f"min_zoom must be in (0, 1], got {self.min_zoom}")
        if self.min_words < 1:
            raise ValueError(f"min_words must be >= 1, got {self.min_words}")


OFF = TextScale(trigger=0.0)


def zoom_for(boxes: np.ndarray, fitted_height: int, scale: TextScale) -> float:
    """The zoom of the second pass for a page whose first pass found ``boxes`` (``float[N, 4]`` relative
    xyxy) when fitted ``fitted_height`` px high; 1.0 when the page needs none."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if scale.trigger <= 0 or len(boxes) < scale.min_words:
        return 1.0
    median = float(np.median(boxes[:, 3] - boxes[:, 1])) * fitted_height
    if median <= scale.trigger:
        return 1.0
    return max(scale.min_zoom, scale.target / median)


class TextScaleStage:
    """Pipeline stage: detect pages whose words came out large again, shrunk (pages already marked as photos
    are left to the photo detector).

    Args:
        options: the rule.
        detect: the pipeline's detect stage; its predictor takes ``(pages, zooms)`` and fits pages into
            ``shapes`` (:class:`~vision.predictors.detection.predictor.DetectionPredictor`).
        shapes: the detector's input shapes (to know each page's fitted height).
    """

    def __init__(self, options: TextScale, detect: DetectStage, shapes: tuple[tuple[int, int], ...]) -> None:
        self.options, self.detect, self.shapes = options, detect, shapes

    def __call__(self, states: list[PageState]) -> list[PageState]:
        from vision.predictors.detection.predictor import fitted_size, pick_shape

        todo, zooms = [], []
        for s in states:
            if not s.needs_ocr or s.photo or s.boxes is None:
                continue
            size = s.image.shape[:2]
            zoom = zoom_for(s.boxes, fitted_size(size, pick_shape(*size, self.shapes))[0], self.options)
            if zoom < 1.0:
                todo.append(s)
                zooms.append(zoom)
        if todo:
            self.detect.again(todo, zooms)
        return states
