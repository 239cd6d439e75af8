"""Limits and defaults in one typed object, overridable from the CLI, the server config and arguments."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Limits", "DEFAULT_LIMITS", "cache_dir"]


@dataclass(frozen=True)
class Limits:
    """Input limits that protect a process from huge or hostile files.

    Attributes:
        max_bytes: largest accepted file, in bytes.
        max_pixels: largest decoded page or frame (width * height); guards against decompression bombs.
        max_pages: most pages read from one document (PDF or multi-page TIFF).
        max_frames: most frames sampled from one video.
        pdf_max_dpi: highest rendering resolution accepted for PDFs.
    """

    max_bytes: int = 512 * 1024**2
    max_pixels: int = 178_956_970  # Pillow's own decompression-bomb threshold (2 * 89.5 MP)
    max_pages: int = 5_000
    max_frames: int = 100_000
    pdf_max_dpi: int = 1200

    def replace(self, **changes: int) -> "Limits":
        """Return a copy with some fields changed (``None`` values are ignored)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


DEFAULT_LIMITS = Limits()


def cache_dir(kind: str) -> Path:
    """``$VISION_CACHE/<kind>`` or ``~/.cache/vision/<kind>``: where derived files (ONNX exports, downloaded
    checkpoints) are kept. Nothing in it is needed offline: each file can be made again."""
    root = os.environ.get("VISION_CACHE") or Path.home() / ".cache" / "vision"
    return Path(root) / kind
