"""Format sniffing from magic bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from io_fixtures import encode_image, make_pdf
from PIL import Image

from vision.io import sniff_format
from vision.io.sniff import kind_of


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [("PNG", "png"), ("JPEG", "jpeg"), ("GIF", "gif"), ("BMP", "bmp"), ("TIFF", "tiff"), ("WEBP", "webp")],
)
def test_images(fmt: str, expected: str) -> None:
    data = encode_image(Image.new("RGB", (4, 4)), fmt)
    assert sniff_format(data[:4096]) == expected and kind_of(expected) == "image"


def test_pdf_even_after_leading_junk() -> None:
    data = make_pdf()
    assert sniff_format(data) == "pdf"
    assert sniff_format(b"\xef\xbb\xbf garbage\n" + data) == "pdf"
    assert kind_of("pdf") == "pdf"


def test_video_containers_and_audio(video_path: Path) -> None:
    assert sniff_format(video_path.read_bytes()[:64]) == "mp4"
    assert sniff_format(b"\x1a\x45\xdf\xa3" + bytes(40)) == "matroska"
    assert sniff_format(b"RIFF\x00\x00\x00\x00AVI LIST") == "avi"
    assert sniff_format(b"RIFF\x00\x00\x00\x00WAVEfmt ") == "wav" and kind_of("wav") is None
    assert sniff_format(b"\x00\x00\x00\x20ftypM4A " + bytes(20)) == "m4a"
    assert sniff_format(b"\x00\x00\x00\x18ftypavif" + bytes(20)) == "heif" and kind_of("heif") is None
    assert all(kind_of(f) == "video" for f in ("mp4", "matroska", "avi", "mpeg-ts"))
    ts = bytearray(400)
    ts[0] = ts[188] = 0x47
    assert sniff_format(bytes(ts)) == "mpeg-ts"


def test_unknown() -> None:
    assert sniff_format(b"") is None
    assert sniff_format(b"hello world, just text") is None
    assert sniff_format(b"BM") is None  # too short to be a BMP header
    assert kind_of(None) is None
