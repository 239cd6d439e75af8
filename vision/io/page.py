"""The one form every reader returns: an RGB ``H x W x 3`` uint8 numpy page plus its metadata."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.structures.geometry import BBox

__all__ = ["PageImage", "TextLayerWord"]


@dataclass(frozen=True)
class TextLayerWord:
    """A word from a born-digital PDF's text layer, with its box relative to the page."""

    value: str
    geometry: BBox


@dataclass
class PageImage:
    """One page (image, PDF page, TIFF page) or one video frame.

    Attributes:
        image: RGB uint8 array of shape ``(H, W, 3)``, C-contiguous.
        source: file name (or ``"<bytes>"``, ``"<array>"``, ...) it came from.
        index: page index in the document, or frame index in the sampled video.
        original_size: ``(height, width)`` of the page before any rendering scale (PDF points at 72 dpi
            for PDFs, pixels otherwise).
        dpi: rendering resolution for PDF pages, the resolution an image file declares (PNG pHYs, TIFF,
            JPEG JFIF), else ``None``.
        timestamp: presentation time in seconds for video frames, else ``None``.
        text_layer: words of a PDF page's embedded text (empty for scans and images).
    """

    image: np.ndarray
    source: str
    index: int
    original_size: tuple[int, int]
    dpi: float | None = None
    timestamp: float | None = None
    text_layer: list[TextLayerWord] = field(default_factory=list)

    @property
    def size(self) -> tuple[int, int]:
        """``(height, width)`` of :attr:`image` in pixels."""
        return int(self.image.shape[0]), int(self.image.shape[1])
