"""Limits and defaults in one typed object, overridable from the CLI, the server config and arguments."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Limits", "DEFAULT_LIMITS", "EXPANSION_FREE_PIXELS", "cache_dir"]

EXPANSION_FREE_PIXELS = 64 * 1024**2  # below this many decoded pixels a file is never a "bomb" by ratio


@dataclass(frozen=True)
class Limits:
    """Input limits that protect a process from huge or hostile files.

    Attributes:
        max_bytes: largest accepted file, in bytes.
        max_pixels: largest decoded page or frame (width * height); guards against decompression bombs.
        max_pages: most pages read from one document (PDF or multi-page TIFF).
        max_frames: most frames sampled from one video.
        pdf_max_dpi: highest rendering resolution accepted for PDFs.
        max_expansion: most decoded pixels per encoded byte for image files that decode to more than
            :data:`EXPANSION_FREE_PIXELS` pixels in all; flags files whose headers promise far more
            pixels than their data can hold (a 35-byte GIF with a 13000x13000 screen, a TIFF whose pages
            share one strip). Lossless codecs top out near 8,000 pixels per byte on blank 1-bit pages.
        pdf_sandbox: render PDFs in a separate worker process with the limits below, so a hostile
            PDF costs that worker, never the caller's process (not in daemonic processes, such as
            multiprocessing pool workers, which may not start children: they render in-process).
        pdf_timeout_s: wall-clock seconds allowed to open a PDF or render one page (sandbox only).
        pdf_cpu_s: CPU seconds a PDF worker may spend opening a PDF or rendering one page (``RLIMIT_CPU``).
        pdf_memory_bytes: address space of a PDF worker (``RLIMIT_AS``; sandbox only).
    """

    max_bytes: int = 512 * 1024**2
    max_pixels: int = 178_956_970  # Pillow's own decompression-bomb threshold (2 * 89.5 MP)
    max_pages: int = 5_000
    max_frames: int = 100_000
    pdf_max_dpi: int = 1200
    max_expansion: int = 10_000
    pdf_sandbox: bool = True
    pdf_timeout_s: float = 30.0
    pdf_cpu_s: int = 120
    pdf_memory_bytes: int = 3 * 1024**3

    def replace(self, **changes: float | bool | None) -> "Limits":
        """Return a copy with some fields changed (``None`` values are ignored)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


DEFAULT_LIMITS = Limits()


def cache_dir(kind: str) -> Path:
    """``$VISION_CACHE/<kind>`` or ``~/.cache/vision/<kind>``: where derived files (ONNX exports, downloaded
    checkpoints) are kept. Nothing in it is needed offline: each file can be made again."""
    root = os.environ.get("VISION_CACHE") or Path.home() / ".cache" / "vision"
    return Path(root) / kind
