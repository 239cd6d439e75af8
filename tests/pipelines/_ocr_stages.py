"""Small real stages for pipeline tests, independent of trained weights.

* :func:`render_page`: words drawn with DejaVu Sans at known places (the ground truth).
* :class:`InkDetector`: a classical detector (ink -> dilation -> connected components), exact on clean
  rendered pages, giving straight boxes or rotated quads (minimum-area rectangles).
* :class:`TemplateReader`: a closed-vocabulary recognizer (normalised correlation with rendered word
  templates); its confidence drops on upside-down crops, which is what orientation needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.ops.boxes import order_quad

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
TEXT = [
    "Invoice number 4471 dated March",
    "Deliver parcels to Harbor Street",
    "Total amount due within thirty days",
    "Contact billing office for questions",
]
VOCABULARY = sorted({w for line in TEXT for w in line.split()})


def render_page(
    lines: list[str] = TEXT,
    *,
    size: tuple[int, int] = (360, 640),
    font_size: int = 22,
    top: int = 40,
    left: int = 40,
    line_height: int = 32,
    angle: float = 0.0,
):
    """A white page with ``lines`` of black text.

    Returns ``(image uint8[H, W, 3], words)`` with ``words = [(text, quad float[4, 2] in pixels)]`` in
    reading order; ``angle`` rotates the whole page content clockwise about the centre (white border).
    """
    h, w = size
    image = Image.new("RGB", (w, h), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, font_size)
    words = []
    for k, line in enumerate(lines):
        x, y = left, top + k * line_height
        for word in line.split():
            x0, y0, x1, y1 = draw.textbbox((x, y), word, font=font)
            draw.text((x, y), word, font=font, fill="black")
            words.append((word, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)))
            x += draw.textlength(word + " ", font=font)
    array = np.asarray(image)
    if angle:
        m = cv2.getRotationMatrix2D((w / 2, h / 2), -angle, 1.0)
        array = cv2.warpAffine(array, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=(255, 255, 255))
        words = [(t, q @ m[:, :2].T + m[:, 2]) for t, q in words]
    return np.ascontiguousarray(array), words


@dataclass
class Detection:
    boxes: np.ndarray
    scores: np.ndarray
    polygons: np.ndarray


class InkDetector:
    """Word boxes of dark ink: letters merge under a small dilation, words and lines stay apart."""

    def __init__(self, *, straight: bool = True, radius: int = 3) -> None:
        self.straight, self.radius = straight, radius
        self.calls = 0

    def _page(self, image: np.ndarray) -> Detection:
        h, w = image.shape[:2]
        ink = (cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) < 128).astype(np.uint8)
        size = 2 * self.radius + 1
        merged = cv2.dilate(ink, np.ones((size, size), np.uint8))
        count, labels = cv2.connectedComponents(merged)
        quads = []
        for k in range(1, count):
            pts = np.argwhere((labels == k) & (ink > 0))[:, ::-1].astype(np.float32)
            if len(pts) < 4:
                continue
            if self.straight:
                x0, y0 = pts.min(axis=0)
                x1, y1 = pts.max(axis=0) + 1
                quads.append([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
            else:
                (cx, cy), (rw, rh), angle = cv2.minAreaRect(pts)  # through pixel centres: grow to pixel edges
                quads.append(order_quad(cv2.boxPoints(((cx + 0.5, cy + 0.5), (rw + 1, rh + 1), angle))))
        polygons = np.asarray(quads, np.float32).reshape(-1, 4, 2) / [w, h]
        boxes = np.concatenate([polygons.min(axis=1), polygons.max(axis=1)], axis=1)
        return Detection(
            boxes.astype(np.float32), np.ones(len(boxes), np.float32), polygons.astype(np.float32)
        )

    def __call__(self, pages: list[np.ndarray]) -> list[Detection]:
        self.calls += 1
        return [self._page(p) for p in pages]


class TemplateReader:
    """Reads crops by normalised correlation against the words of ``vocabulary`` rendered upright."""

    SIZE = (96, 24)  # (width, height) every crop and template is compared at

    def __init__(self, vocabulary: list[str] = VOCABULARY, font_size: int = 22) -> None:
        font = ImageFont.truetype(FONT, font_size)
        self.words = list(vocabulary)
        self.templates = np.stack([self._norm(self._render(word, font)) for word in self.words])
        self.seen = 0
        self.calls = 0

    @staticmethod
    def _render(word: str, font: ImageFont.FreeTypeFont) -> np.ndarray:
        image = Image.new("L", (font_size_px(font, word) + 10, 60), 255)
        ImageDraw.Draw(image).text((5, 5), word, font=font, fill=0)
        return np.asarray(image)

    def _norm(self, gray: np.ndarray) -> np.ndarray:
        ys, xs = np.nonzero(gray < 128)
        if len(xs) == 0:
            return np.zeros(self.SIZE[::-1] + (0,)).reshape(-1)[:0]
        tight = gray[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].astype(np.float64)
        v = cv2.resize(tight, self.SIZE, interpolation=cv2.INTER_AREA).reshape(-1)
        v -= v.mean()
        return v / (np.linalg.norm(v) + 1e-9)

    def __call__(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
        self.seen += len(crops)
        self.calls += 1
        out = []
        for crop in crops:
            v = self._norm(cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_RGB2GRAY))
            if v.size == 0:
                out.append(("", 0.0))
                continue
            scores = self.templates @ v
            best = int(np.argmax(scores))
            out.append((self.words[best], float(max(scores[best], 0.0))))
        return out


def font_size_px(font: ImageFont.FreeTypeFont, word: str) -> int:
    return int(np.ceil(font.getlength(word)))
