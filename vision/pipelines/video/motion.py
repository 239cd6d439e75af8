"""Frame-to-frame motion of the text layer, estimated from the words OCR read on two sampled frames.

The OCR gives every frame's words with boxes; the same word read on two frames is a point correspondence.
Words whose normalized text (case-folded alphanumerics) occurs once on each frame are paired, then, when
fewer than three pairs exist, words are paired by fuzzy text (rapidfuzz ``ratio`` >= 80). A similarity
transform (scale, rotation, translation) is fitted to the word centres with RANSAC
(``cv2.estimateAffinePartial2D``); a second transform is fitted to the pairs the first one leaves out, so text
that moves on its own over a still picture (a ticker over a studio, a still headline over scrolling credits)
gets its own motion. With one or two pairs the motion is the median shift and scale of the pairs.

Working on words rather than pixels means the motion comes with no extra image work, survives frames with
few features outside the text, and travels with the OCR pages (the JSON, the worker processes and the Ray
engine carry no images). Frames with no text have no motion (``None``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from rapidfuzz import fuzz

from vision.structures import Page

__all__ = ["IDENTITY", "FrameWords", "Motion", "apply", "compose", "estimate_motion", "frame_words"]

IDENTITY = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


@dataclass(frozen=True)
class FrameWords:
    """The words of one frame: normalized texts and their boxes ``float[N, 4]`` in pixels."""

    keys: tuple[str, ...]
    boxes: np.ndarray
    size: tuple[int, int]  # (height, width) in pixels

    @property
    def centres(self) -> np.ndarray:
        """``float[N, 2]`` box centres."""
        return (self.boxes[:, :2] + self.boxes[:, 2:]) / 2


@dataclass(frozen=True)
class Motion:
    """Where the previous frame's content went: ``layers[0]`` the dominant motion, ``layers[1]`` (if any) a
    second one; each a ``float[2, 3]`` matrix mapping previous-frame pixels to current-frame pixels.
    ``members[i]`` lists the current frame's word indices that moved with ``layers[i]``."""

    layers: tuple[np.ndarray, ...]
    members: tuple[frozenset[int], ...]
    pairs: int

    def layer_of(self, words: Sequence[int]) -> int:
        """The layer most of ``words`` (current-frame indices) moved with; 0 when none was paired."""
        votes = [sum(w in m for w in words) for m in self.members]
        return int(np.argmax(votes)) if votes and max(votes) > 0 else 0


def _key(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def frame_words(page: Page) -> FrameWords:
    """The words of an OCR page (words without letters or digits left out), boxes in pixels."""
    h, w = page.dimensions
    keys, boxes = [], []
    for word in page.words:
        key = _key(word.value)
        if key and word.geometry is not None:
            x0, y0, x1, y1 = word.geometry
            keys.append(key)
            boxes.append((x0 * w, y0 * h, x1 * w, y1 * h))
    return FrameWords(tuple(keys), np.array(boxes, dtype=np.float64).reshape(-1, 4), (h, w))


def _pairs(prev: FrameWords, cur: FrameWords) -> list[tuple[int, int]]:
    """``(previous index, current index)`` pairs: unique exact texts, then fuzzy ones when few."""
    pc, cc = Counter(prev.keys), Counter(cur.keys)
    where = {k: i for i, k in enumerate(prev.keys) if pc[k] == 1}
    pairs = [(where[k], j) for j, k in enumerate(cur.keys) if cc[k] == 1 and k in where and len(k) >= 2]
    if len(pairs) >= 3:
        return pairs
    used_p, used_c = {p for p, _ in pairs}, {c for _, c in pairs}
    for j, key in enumerate(cur.keys):
        if j in used_c or len(key) < 3:
            continue
        scores = [(fuzz.ratio(key, k), i) for i, k in enumerate(prev.keys) if i not in used_p]
        best = max(scores, default=(0.0, -1))
        if best[0] >= 80:
            pairs.append((best[1], j))
            used_p.add(best[1])
            used_c.add(j)
    return pairs


def _fit(src: np.ndarray, dst: np.ndarray, threshold: float) -> tuple[np.ndarray | None, np.ndarray]:
    """A similarity ``src -> dst`` by RANSAC (>= 3 points) or from median shift and scale (1-2 points)."""
    if len(src) >= 3:
        matrix, inliers = cv2.estimateAffinePartial2D(
            src.reshape(-1, 1, 2),
            dst.reshape(-1, 1, 2),
            method=cv2.RANSAC,
            ransacReprojThreshold=threshold,
            maxIters=500,
            confidence=0.995,
        )
        if matrix is not None and inliers is not None and int(inliers.sum()) >= 3:
            return matrix.astype(np.float64), inliers.ravel().astype(bool)
        return None, np.zeros(len(src), bool)
    shift = np.median(dst - src, axis=0)
    matrix = IDENTITY.copy()
    matrix[:, 2] = shift
    return matrix, np.ones(len(src), bool)


def estimate_motion(prev: FrameWords, cur: FrameWords) -> Motion | None:
    """The motion from ``prev`` to ``cur`` (``None``: no word in common, e.g. a cut or an empty frame)."""
    pairs = _pairs(prev, cur)
    if not pairs:
        return None
    pi = np.array([p for p, _ in pairs])
    ci = np.array([c for _, c in pairs])
    src, dst = prev.centres[pi], cur.centres[ci]
    heights = cur.boxes[ci, 3] - cur.boxes[ci, 1]
    threshold = max(2.0, 0.3 * float(np.median(heights)))  # a third of a text line: OCR box jitter is less
    layers, members = [], []
    remaining = np.arange(len(pairs))
    for _ in range(2):
        if len(remaining) == 0 or (layers and len(remaining) < 3):
            break
        matrix, inliers = _fit(src[remaining], dst[remaining], threshold)
        if matrix is None:
            break
        if len(remaining) < 3 and len(remaining) >= 2:  # two pairs: the scale from their distance
            d0 = np.linalg.norm(src[remaining][1] - src[remaining][0])
            d1 = np.linalg.norm(dst[remaining][1] - dst[remaining][0])
            if d0 > threshold and 0.5 < d1 / d0 < 2.0:
                s = d1 / d0
                matrix = np.array([[s, 0, 0], [0, s, 0]], dtype=np.float64)
                matrix[:, 2] = np.median(dst[remaining] - src[remaining] * s, axis=0)
        layers.append(matrix)
        members.append(frozenset(int(ci[k]) for k in remaining[inliers]))
        remaining = remaining[~inliers]
    if not layers:
        return None
    return Motion(tuple(layers), tuple(members), len(pairs))


def apply(matrix: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Axis-aligned boxes ``float[N, 4]`` around the images of ``boxes`` under a ``2x3`` matrix."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    corners = boxes[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 4, 2)
    mapped = corners @ matrix[:, :2].T + matrix[:, 2]
    return np.concatenate([mapped.min(axis=1), mapped.max(axis=1)], axis=1)


def compose(outer: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """The ``2x3`` matrix of ``outer`` after ``inner``."""
    full = np.vstack([inner, [0.0, 0.0, 1.0]])
    return (np.vstack([outer, [0.0, 0.0, 1.0]]) @ full)[:2]


def invert(matrix: np.ndarray) -> np.ndarray:
    """The inverse of a ``2x3`` affine matrix."""
    return cv2.invertAffineTransform(matrix).astype(np.float64)
