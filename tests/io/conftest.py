"""Session fixtures for the reader tests (builders live in io_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from io_fixtures import make_audio_only, make_vfr_video, make_video
from PIL import Image


@pytest.fixture(scope="session")
def video_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 frames at 10 fps, 64x48 (session-wide: encoding is the slow part)."""
    return make_video(tmp_path_factory.mktemp("video") / "clip.mp4")


@pytest.fixture(scope="session")
def vfr_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_vfr_video(tmp_path_factory.mktemp("video") / "vfr.mp4")


@pytest.fixture(scope="session")
def audio_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_audio_only(tmp_path_factory.mktemp("audio") / "tone.m4a")


@pytest.fixture
def rgb_image() -> Image.Image:
    """A 20x40 RGB image: red left half, blue right half."""
    arr = np.zeros((20, 40, 3), np.uint8)
    arr[:, :20] = (255, 0, 0)
    arr[:, 20:] = (0, 0, 255)
    return Image.fromarray(arr)
