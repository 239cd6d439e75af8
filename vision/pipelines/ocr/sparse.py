"""The ``sparse`` stage: drop readings that are likely invented on pages with little text.

Photos, screens and text-free images give the detector few real words and much texture (foliage, window
frames, logos, icons), and the recognizer reads a glyph into almost anything: on such pages a lone symbol or
a single character is far more often noise than text. Documents are dense, and there the same readings are
real (check boxes, field values, table cells), so the rule applies only to pages with fewer than
:attr:`SparseOptions.max_words` readings. On those pages it drops lone glyphs: readings with no letter or
digit (check boxes excepted) or of one character that have no other reading beside them on their line (as
"a" has in "a cat"); and readings under :attr:`SparseOptions.min_confidence` (0 by default: no floor). By
default the rule reads only pages the ``photo`` gate marks as photos (:mod:`vision.pipelines.ocr.photo`):
table crops are sparse pages whose lone cells are real, and there it costs (``docs/pipeline.md``);
``OCROptions.sparse`` turns it on for every page. ``SparseOptions(max_words=80)`` is the setting chosen on
synthetic scene and document pages, never on the evaluation sets.

Runs after ``recognize`` and before ``script`` and ``layout``; words from a PDF text layer are never touched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.pipelines.base import PageState

__all__ = ["PHOTOS", "SparseOptions", "SparseStage", "sparse_keep"]

BOXES = frozenset("\u2610\u2611")
"""The recognizer's check-box classes (empty, checked): symbols, but deliberate."""


@dataclass(frozen=True)
class SparseOptions:
    """Thresholds of the sparse-page rule (see the module docstring).

    Attributes:
        max_words: pages with fewer readings than this are sparse; 0 (the default) turns the rule off;
            80 is the setting chosen for photos (:data:`PHOTOS`).
        min_confidence: on sparse pages, readings less confident than this are dropped.
    """

    max_words: int = 0
    min_confidence: float = 0.0

    def __post_init__(self) -> None:
        if self.max_words < 0:
            raise ValueError(f"max_words must be >= 0, got {self.max_words}")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError(f"min_confidence must be in [0, 1], got {self.min_confidence}")


PHOTOS = SparseOptions(max_words=80)
"""The setting chosen on synthetic pages for photos and screens (``vision ocr --sparse-words 80``)."""


def _has_neighbour(boxes: np.ndarray, i: int) -> bool:
    """Whether another box shares box ``i``'s line (vertical overlap >= half the smaller height) within one
    line height of it horizontally."""
    x0, y0, x1, y1 = boxes[i]
    h = max(y1 - y0, 1e-9)
    others = np.delete(boxes, i, axis=0)
    overlap = np.minimum(others[:, 3], y1) - np.maximum(others[:, 1], y0)
    same_line = overlap >= 0.5 * np.minimum(others[:, 3] - others[:, 1], h)
    gap = np.maximum(others[:, 0] - x1, x0 - others[:, 2])
    return bool(np.any(same_line & (gap <= h)))


def sparse_keep(
    texts: list[tuple[str, float]], boxes: np.ndarray, options: SparseOptions = PHOTOS
) -> np.ndarray:
    """``bool[N]``: which ``(text, confidence)`` readings of one page, boxed by ``boxes float[N, 4]`` (xyxy,
    one scale for x and y), the rule keeps."""
    keep = np.ones(len(texts), dtype=bool)
    if len(texts) >= options.max_words:
        return keep
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    for i, (text, conf) in enumerate(texts):
        core = "".join(text.split())
        glyph = not BOXES & set(core) and (len(core) <= 1 or not any(c.isalnum() for c in core))
        keep[i] = conf >= options.min_confidence and not (glyph and not _has_neighbour(boxes, i))
    return keep


class SparseStage:
    """Pipeline stage applying :func:`sparse_keep` to each OCR'd page's readings and their geometry.

    Args:
        options: the rule on every page.
        photos: the rule on pages marked as photos (``PageState.photo``, :mod:`vision.pipelines.ocr.photo`);
            ``None``: ``options``.
    """

    def __init__(self, options: SparseOptions = PHOTOS, photos: SparseOptions | None = None) -> None:
        self.options, self.photos = options, photos or options

    def __call__(self, states: list[PageState]) -> list[PageState]:
        for s in states:
            if not s.needs_ocr or not s.texts:
                continue
            if s.boxes is None or len(s.boxes) != len(s.texts):
                continue
            options = self.photos if s.photo else self.options
            if options.max_words == 0:
                continue
            h, w = s.image.shape[:2]
            keep = sparse_keep(list(s.texts), np.asarray(s.boxes, np.float64) * [w, h, w, h], options)
            if not keep.all():
                s.keep_words(keep)
        return states
