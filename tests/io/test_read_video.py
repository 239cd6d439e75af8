"""DocumentFile.from_video: time sampling (also on variable frame rate), ranges, limits and streaming."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from io_fixtures import frame_value

from vision.errors import CorruptFile, LimitExceeded, UnsupportedFormat
from vision.io import DocumentFile
from vision.io.video import MAX_CHUNK
from vision.settings import Limits


def _gray(image: np.ndarray) -> float:
    return float(image.mean())


def test_every_frame_with_timestamps(video_path: Path) -> None:
    doc = DocumentFile.from_video(video_path)
    assert doc.kind == "video" and len(doc) == 30 and doc.source == str(video_path)
    frames = list(doc)
    assert [f.index for f in frames] == list(range(30))
    assert [f.timestamp for f in frames] == pytest.approx([i / 10 for i in range(30)])
    for i, frame in enumerate(frames):
        assert frame.image.shape == (48, 64, 3) and frame.image.dtype == np.uint8
        assert abs(_gray(frame.image) - frame_value(i)) < 3
        assert frame.original_size == (48, 64) and frame.dpi is None
    with pytest.raises(TypeError, match="iterate"):
        doc[0]


def test_sampling_by_fps(video_path: Path) -> None:
    doc = DocumentFile.from_video(video_path, fps=2)
    frames = list(doc)
    assert len(doc) == len(frames) == 6
    assert [f.timestamp for f in frames] == pytest.approx([0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    assert [round((_gray(f.image) - 8) / 8) for f in frames] == [0, 5, 10, 15, 20, 25]


def test_start_end_and_max_frames(video_path: Path) -> None:
    ranged = list(DocumentFile.from_video(video_path, start=1.0, end=2.0))
    assert [f.timestamp for f in ranged] == pytest.approx([1.0 + i / 10 for i in range(10)])
    assert [f.index for f in ranged] == list(range(10))
    sampled = list(DocumentFile.from_video(video_path, fps=4, start=1.0, end=2.0))
    assert [f.timestamp for f in sampled] == pytest.approx(
        [1.0, 1.2, 1.5, 1.7]
    )  # frames shown at 1, 1.25, ...
    assert len(DocumentFile.from_video(video_path, fps=100, max_frames=3)) == 3
    assert len(DocumentFile.from_video(video_path, fps=30)) == 90  # oversampling repeats the frame on screen
    assert [f.timestamp for f in DocumentFile.from_video(video_path, start=2.85)] == pytest.approx([2.9])
    with pytest.raises(ValueError, match="end"):
        DocumentFile.from_video(video_path, start=2.0, end=1.0)
    with pytest.raises(ValueError, match="video spans 0.000 to 3.000 s"):
        DocumentFile.from_video(video_path, start=10.0)
    with pytest.raises(LimitExceeded, match="max_frames"):
        DocumentFile.from_video(video_path, fps=1e308)
    with pytest.raises(ValueError, match="fps"):
        DocumentFile.from_video(video_path, fps=0)


def test_variable_frame_rate_sampling_is_exact(vfr_path: Path) -> None:
    native = [f.timestamp for f in DocumentFile.from_video(vfr_path)]
    assert len(native) == 20
    steps = np.diff(native)
    assert steps[:9] == pytest.approx([0.1] * 9) and steps[10:] == pytest.approx([0.25] * 9)
    doc = DocumentFile.from_video(vfr_path, fps=10)
    sampled = list(doc)
    times = [i / 10 for i in range(len(doc))]
    assert times[-1] < doc.end <= times[-1] + 0.1 + 1e-9  # every sample time before the stream's end
    for t, frame in zip(times, sampled, strict=True):
        shown = max(p for p in native if p <= t + 1e-9)  # the frame on screen at time t
        assert frame.timestamp == pytest.approx(shown), t


def test_streams_in_small_chunks(video_path: Path) -> None:
    doc = DocumentFile.from_video(video_path, fps=20)
    calls: list[int] = []
    decoder = doc._decoder

    class Spy:
        def __getattr__(self, name: str) -> Any:
            return getattr(decoder, name)

        def get_frames_played_at(self, seconds: list[float]) -> Any:
            calls.append(len(seconds))
            return decoder.get_frames_played_at(seconds=seconds)

    doc._decoder = Spy()
    it = iter(doc)
    next(it)
    assert calls == [MAX_CHUNK]  # the first frame needs one chunk, not the whole video
    rest = sum(1 for _ in it)
    assert rest == 59 and sum(calls) == 60 and max(calls) <= MAX_CHUNK


def test_inputs_bytes_and_file_object(video_path: Path) -> None:
    data = video_path.read_bytes()
    assert len(DocumentFile.from_video(data, fps=1)) == 3
    with open(video_path, "rb") as fh:
        assert [f.timestamp for f in DocumentFile.from_video(fh, fps=1)] == pytest.approx([0.0, 1.0, 2.0])
    assert DocumentFile.from_video(io.BytesIO(data)).source == "<stream>"


def test_limits(video_path: Path) -> None:
    with pytest.raises(LimitExceeded, match="max_frames"):
        DocumentFile.from_video(video_path, limits=Limits(max_frames=29))
    assert len(DocumentFile.from_video(video_path, max_frames=29, limits=Limits(max_frames=29))) == 29
    with pytest.raises(LimitExceeded, match="max_pixels"):
        DocumentFile.from_video(video_path, limits=Limits(max_pixels=64 * 48 - 1))
    with pytest.raises(LimitExceeded, match="max_bytes"):
        DocumentFile.from_video(video_path, limits=Limits(max_bytes=100))


def test_devices(video_path: Path) -> None:
    auto = DocumentFile.from_video(video_path, fps=1, device="auto")
    assert auto.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert [f.timestamp for f in auto] == pytest.approx([0.0, 1.0, 2.0])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            DocumentFile.from_video(video_path, device="cuda")
    with pytest.raises(ValueError, match="device"):
        DocumentFile.from_video(video_path, device="tpu")


def test_no_video_stream(audio_path: Path) -> None:
    for read in (DocumentFile.from_video, DocumentFile.from_path):
        with pytest.raises(UnsupportedFormat, match="no video stream") as err:
            read(audio_path)
        assert str(audio_path) in str(err.value)


def test_truncated_video(video_path: Path, tmp_path: Path) -> None:
    data = video_path.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFile, match="cut.mp4"):
        list(DocumentFile.from_video(cut))
