"""Word crops cut from whole synthetic pages, as the OCR pipeline cuts them from real ones.

The word renderer (:mod:`.words`) degrades each crop on its own. Real crops come from pages that were
degraded whole (a fax binarised at 100 dpi, a scan's blur and JPEG at page scale, photo lighting) and are cut
along a detector's or an annotator's box, never exactly tight. :class:`PageWordCrops` renders a page
(:class:`.pages.PageRenderer`: forms, letters, tables, receipts with their rules, boxes and neighbours),
rescales it to a random scan resolution, degrades it with a page profile (:func:`.page_degrade.degrade_page`)
and cuts its words with jittered boxes, resized to the recognizer's height exactly as the predictor resizes.
A page gives up to ``per_page`` crops, served one per call, so its cost is shared. :class:`MixedWords`
draws from it for a share of the samples and from the word renderer for the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from vision.predictors.recognition.preprocess import resize_to_height
from vision.training.synth.page_degrade import PAGE_PROFILES, degrade_page

__all__ = ["MixedWords", "PageWordCrops"]

Sample = tuple[np.ndarray, str]


class PageWordCrops:
    """``crops(rng) -> (uint8[32, W, 3], text)``: words of degraded synthetic pages, ``W <= max_width``.

    Args:
        pages: ``rng -> page`` with ``image``, ``boxes`` (pixels, xyxy) and ``texts`` (a ``PageRenderer``).
        max_width: widest crop kept once resized to height 32 (the training width).
        per_page: most crops taken from one page (in random order): rendering the page costs far more than
            cutting it, so by default nearly every word is used.
        scale: range of the random page rescale (log2), applied before degrading: text heights then span
            those of 100-200 dpi scans (median ~15 px, like cropped form words).
        jitter: box edge offsets as fractions of the word height: ``(sideways outward, vertical outward,
            inward)`` maxima. Sideways stays small: word gaps are about a third of the height, and a crop
            must not take in its neighbour's letters, which its label does not have.
    """

    def __init__(self, pages: Callable[[np.random.Generator], Any], *, max_width: int = 192, per_page: int = 400,
                 scale: tuple[float, float] = (-0.4, 0.4),
                 jitter: tuple[float, float, float] = (0.12, 0.3, 0.08)) -> None:
        self.pages, self.max_width, self.per_page = pages, max_width, per_page
        self.scale, self.jitter = scale, jitter
        self._rng: np.random.Generator | None = None
        self._queue: list[Sample] = []

    def __call__(self, rng: np.random.Generator) -> Sample:
        if rng is not self._rng:  # a new stream (a worker, a validation set) never sees another's crops
            self._rng, self._queue = rng, []
        while not self._queue:
            self._queue = self.cut(rng)[::-1]
        return self._queue.pop()

    def cut(self, rng: np.random.Generator) -> list[Sample]:
        """All crops of one freshly rendered and degraded page (possibly none)."""
        page = self.pages(rng)
        s = float(2 ** rng.uniform(*self.scale))
        h, w = page.image.shape[:2]
        image = cv2.resize(page.image, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)
        names = list(PAGE_PROFILES)
        weights = np.array([PAGE_PROFILES[n] for n in names])
        image = degrade_page(image, rng, names[int(rng.choice(len(names), p=weights / weights.sum()))])
        if rng.random() < 0.5:
            image = np.repeat(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)
        boxes = np.asarray(page.boxes, np.float64).reshape(-1, 4) * s
        out: list[Sample] = []
        for i in rng.permutation(len(boxes))[: self.per_page]:
            crop = self._crop(image, boxes[i], rng)
            text = page.texts[i]
            if crop is None or not text.strip() or not _legible(crop):
                continue
            crop = resize_to_height(crop)
            if crop.shape[1] <= self.max_width:
                out.append((crop, text))
        return out

    def _crop(self, image: np.ndarray, box: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
        """The word's box with each edge moved by up to ``jitter`` word heights (outward or inward)."""
        x0, y0, x1, y1 = box
        bh = y1 - y0
        if bh < 4 or x1 - x0 < 2:
            return None
        side, vertical, inward = self.jitter
        outward = np.array([side, vertical, side, vertical])
        d = np.where(rng.random(4) < 0.8, rng.uniform(0, 1, 4) * outward, -rng.uniform(0, inward, 4)) * bh
        H, W = image.shape[:2]
        c0, r0 = int(np.clip(np.floor(x0 - d[0]), 0, W - 1)), int(np.clip(np.floor(y0 - d[1]), 0, H - 1))
        c1, r1 = int(np.clip(np.ceil(x1 + d[2]), c0 + 1, W)), int(np.clip(np.ceil(y1 + d[3]), r0 + 1, H))
        if r1 - r0 < 4:
            return None
        return np.ascontiguousarray(image[r0:r1, c0:c1])


def _legible(crop: np.ndarray) -> bool:
    """False for crops a degradation left without readable ink: too little contrast, or mostly dark (ink
    bleed and binarisation at small sizes can fill a word in). Their labels would only teach noise."""
    grey = crop.mean(axis=2) if crop.ndim == 3 else crop
    lo, hi = np.percentile(grey, (5, 95))
    return bool(hi - lo >= 40 and (grey < (lo + hi) / 2).mean() <= 0.5)


class MixedWords:
    """``rng -> (crop, text)`` from ``pages`` with probability ``share``, else from ``words`` (the word
    renderer, whose other attributes, e.g. ``prewarm``, stay reachable)."""

    def __init__(self, words: Callable[[np.random.Generator], Sample], pages: PageWordCrops, share: float) -> None:
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share must be in [0, 1], got {share}")
        self.words, self.pages, self.share = words, pages, share

    def __call__(self, rng: np.random.Generator) -> Sample:
        return self.pages(rng) if rng.random() < self.share else self.words(rng)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("words", "pages", "share"):  # not set yet (unpickling)
            raise AttributeError(name)
        return getattr(self.words, name)

