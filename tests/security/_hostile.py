"""Helpers of the hostile-input suite: a stub OCR predictor that can be held, test settings, small files."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vision.app.api.security import LOCAL_HOSTS
from vision.app.api.settings import ServiceSettings
from vision.structures import Document, Page


class StubPredictor:
    """One empty page per input page; ``hold()`` makes calls wait until ``release()`` (work keeps running)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()

    def hold(self) -> None:
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()

    def __call__(self, pages: list) -> Document:
        self.entered.set()
        self.gate.wait(30)
        return Document(pages=[Page(page_idx=p.index, dimensions=p.size) for p in pages])


def settings(tmp_path: Path, **overrides: Any) -> ServiceSettings:
    """Test settings: jobs under ``tmp_path``, no UI, loopback Host names plus TestClient's."""
    base: dict[str, Any] = {
        "jobs": {"dir": tmp_path / "jobs", "chunk_pages": 1},
        "ui": False,
        "batching": {"max_wait_ms": 0},
        "allowed_hosts": ["testserver", *LOCAL_HOSTS],
    }
    for key, value in overrides.items():
        merge = isinstance(value, dict) and isinstance(base.get(key), dict)
        base[key] = {**base[key], **value} if merge else value
    return ServiceSettings(**base)


def png_bytes(width: int = 64, height: int = 48) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((height, width, 3), 255, np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def pdf_bytes(pages: int = 1, password: str | None = None) -> bytes:
    """A small PDF of ``pages`` text pages (optionally encrypted with ``password``)."""
    import pikepdf

    pdf = pikepdf.new()
    for _ in range(pages):
        pdf.add_blank_page(page_size=(200, 100))
    buf = io.BytesIO()
    encryption = None if password is None else pikepdf.Encryption(owner=password, user=password)
    pdf.save(buf, encryption=encryption or False)
    return buf.getvalue()
