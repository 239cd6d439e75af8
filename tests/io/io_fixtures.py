"""Builders for the reader tests' inputs: images (Pillow), PDFs (fpdf2) and videos (torchcodec, ffmpeg)."""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
from PIL import Image


def encode_image(image: Image.Image, fmt: str, **kwargs: object) -> bytes:
    """``image`` encoded as ``fmt`` by Pillow."""
    buf = io.BytesIO()
    image.save(buf, fmt, **kwargs)
    return buf.getvalue()


def png_header_only(width: int, height: int) -> bytes:
    """A PNG signature, an IHDR declaring ``width x height`` RGB, one tiny IDAT and IEND (a "bomb" header)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def make_pdf(
    path: Path | None = None,
    *,
    pages: int = 1,
    size: tuple[float, float] = (300, 200),
    text: str | None = "Hello world",
    image: bool = False,
    user_password: str | None = None,
) -> bytes:
    """A PDF of ``pages`` pages (points), with ``text`` at (20, 50) pt and optionally a scanned-like image."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=size)
    if user_password is not None:
        pdf.set_encryption(owner_password="owner-" + user_password, user_password=user_password)
    pdf.set_font("helvetica", size=20)
    for i in range(pages):
        pdf.add_page()
        if text is not None:
            pdf.text(20, 50, text.format(i=i))
        if image:
            pixels = np.full((40, 60, 3), 40, np.uint8)
            pdf.image(Image.fromarray(pixels), x=10, y=10, w=size[0] - 20, h=size[1] - 20)
    data = bytes(pdf.output())
    if path is not None:
        path.write_bytes(data)
    return data


def frame_value(index: int) -> int:
    """Gray level of synthetic video frame ``index`` (distinct, far apart for lossy codecs)."""
    return (index * 8) % 240 + 8


def make_video(path: Path, *, frames: int = 30, fps: float = 10, size: tuple[int, int] = (48, 64)) -> Path:
    """A constant-frame-rate video encoded with torchcodec; frame ``i`` is flat gray ``frame_value(i)``."""
    import torch
    from torchcodec.encoders import VideoEncoder

    data = torch.empty(frames, 3, *size, dtype=torch.uint8)
    for i in range(frames):
        data[i] = frame_value(i)
    VideoEncoder(data, frame_rate=fps).to_file(str(path), crf=0)
    return path


def ffmpeg() -> str:
    """Path of the ffmpeg CLI (``make setup`` installs it)."""
    exe = shutil.which("ffmpeg")
    assert exe, "ffmpeg is required for these tests: run `make setup` (installs it with apt)"
    return exe


def make_vfr_video(path: Path) -> Path:
    """A variable-frame-rate H.264 MP4: 10 frames 0.1 s apart, then 10 frames 0.25 s apart."""
    expr = "if(lt(N,10),N*0.1,1+(N-10)*0.25)/TB"
    subprocess.run(
        [
            ffmpeg(),
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=64x48:rate=10:duration=2",
            "-vf",
            f"settb=1/1000,setpts='{expr}'",
            "-fps_mode",
            "passthrough",
            "-enc_time_base",
            "1/1000",
            "-video_track_timescale",
            "1000",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            str(path),
        ],
        check=True,
        timeout=60,
    )
    return path


def make_audio_only(path: Path) -> Path:
    """An audio-only M4A (AAC) file: a container with no video stream."""
    subprocess.run(
        [ffmpeg(), "-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=0.5", str(path)],
        check=True,
        timeout=60,
    )
    return path
