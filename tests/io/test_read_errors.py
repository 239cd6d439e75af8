"""Bad input: every reader failure is a VisionError naming the file and the reason (no raw traceback,
hang or silent empty result)."""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from io_fixtures import encode_image, make_pdf, png_header_only
from PIL import Image

from vision.errors import (
    CorruptFile,
    LimitExceeded,
    PasswordRequired,
    UnreadableFile,
    UnsupportedFormat,
    VisionError,
)
from vision.io import DocumentFile
from vision.settings import Limits

EXTENSIONS = ["png", "jpg", "gif", "bmp", "tif", "webp", "pdf", "mp4", "mkv", "txt"]
READERS: dict[str, Callable[[Path], DocumentFile]] = {
    "from_path": DocumentFile.from_path,
    "from_images": DocumentFile.from_images,
    "from_pdf": DocumentFile.from_pdf,
    "from_video": DocumentFile.from_video,
}


def _read_all(reader: Callable[[Path], DocumentFile], path: Path) -> int:
    with reader(path) as doc:
        return sum(1 for _ in doc)


@pytest.mark.parametrize("ext", EXTENSIONS)
@pytest.mark.parametrize("reader", READERS)
def test_empty_file(tmp_path: Path, ext: str, reader: str) -> None:
    path = tmp_path / f"empty.{ext}"
    path.write_bytes(b"")
    with pytest.raises(CorruptFile, match=rf"empty\.{ext}: empty file"):
        _read_all(READERS[reader], path)


@pytest.mark.parametrize("ext", EXTENSIONS)
@pytest.mark.parametrize("reader", READERS)
def test_random_bytes(tmp_path: Path, ext: str, reader: str) -> None:
    path = tmp_path / f"noise.{ext}"
    path.write_bytes(np.random.default_rng(len(ext)).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    with pytest.raises((UnsupportedFormat, CorruptFile)) as err:
        _read_all(READERS[reader], path)
    assert str(path) in str(err.value) and err.value.reason


def _truncated(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data[: len(data) // 2])
    return path


def test_truncated_png_and_jpeg(tmp_path: Path) -> None:
    noise = Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8))
    for name, fmt in (("cut.png", "PNG"), ("cut.jpg", "JPEG")):
        path = _truncated(tmp_path, name, encode_image(noise, fmt))
        for reader in (DocumentFile.from_path, DocumentFile.from_images):
            with pytest.raises(CorruptFile, match=rf"{name}: cannot decode {fmt}"):
                _read_all(reader, path)


def test_truncated_pdf(tmp_path: Path) -> None:
    path = _truncated(tmp_path, "cut.pdf", make_pdf(pages=2, image=True))
    with pytest.raises(CorruptFile, match=r"cut\.pdf: damaged PDF"):
        _read_all(DocumentFile.from_pdf, path)


def test_truncated_mp4(tmp_path: Path, video_path: Path) -> None:
    path = _truncated(tmp_path, "cut.mp4", video_path.read_bytes())
    with pytest.raises(CorruptFile, match=r"cut\.mp4: damaged mp4"):
        _read_all(DocumentFile.from_path, path)


def test_pdf_without_xref_is_rebuilt_or_refused(tmp_path: Path) -> None:
    data = make_pdf(text="No xref here")
    start, trailer = data.index(b"\nxref") + 1, data.index(b"trailer")
    rebuilt = DocumentFile.from_pdf(data[:start] + data[trailer:])  # xref table gone: PDFium reconstructs it
    assert [w.value for w in rebuilt[0].text_layer] == ["No", "xref", "here"]
    path = tmp_path / "noxref.pdf"
    path.write_bytes(data[:start])  # no xref, no trailer: nothing to rebuild from
    with pytest.raises(CorruptFile, match=r"noxref\.pdf: damaged PDF"):
        DocumentFile.from_pdf(path)


def test_encrypted_pdf_through_from_path(tmp_path: Path) -> None:
    path = tmp_path / "locked.pdf"
    path.write_bytes(make_pdf(user_password="pw"))
    with pytest.raises(PasswordRequired, match=r"locked\.pdf: encrypted PDF"):
        DocumentFile.from_path(path)
    assert len(DocumentFile.from_path(path, password="pw")) == 1


def test_decompression_bomb_header_is_refused_without_allocating(tmp_path: Path) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(png_header_only(30000, 30000))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    for limits in (None, Limits(max_pixels=10**6)):
        with pytest.raises(LimitExceeded, match=r"bomb\.png"):
            DocumentFile.from_path(path, limits=limits)
    assert time.perf_counter() - start < 2.0
    assert (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024
    )  # KiB; decoding is 2.5 GiB
    with pytest.raises(LimitExceeded, match="3000x3000 = 9000000 pixels"):
        DocumentFile.from_images(png_header_only(3000, 3000), limits=Limits(max_pixels=10**6))


def test_audio_only_file(audio_path: Path) -> None:
    with pytest.raises(UnsupportedFormat, match="no video stream"):
        DocumentFile.from_path(audio_path)


def test_mislabeled_files_are_read_by_content(
    tmp_path: Path, rgb_image: Image.Image, video_path: Path
) -> None:
    png_as_pdf = tmp_path / "really_png.pdf"
    png_as_pdf.write_bytes(encode_image(rgb_image, "PNG"))
    doc = DocumentFile.from_path(png_as_pdf)
    assert doc.kind == "image"
    np.testing.assert_array_equal(doc[0].image, np.asarray(rgb_image))
    pdf_as_png = tmp_path / "really_pdf.png"
    pdf_as_png.write_bytes(make_pdf(text="Mislabeled"))
    assert DocumentFile.from_path(pdf_as_png).kind == "pdf"
    mp4_as_jpg = tmp_path / "really_mp4.jpg"
    mp4_as_jpg.write_bytes(video_path.read_bytes())
    assert len(DocumentFile.from_path(mp4_as_jpg, fps=1)) == 3
    with pytest.raises(UnsupportedFormat, match=r"really_png\.pdf: is a PNG file, not a PDF"):
        DocumentFile.from_pdf(png_as_pdf)
    with pytest.raises(UnsupportedFormat, match=r"really_pdf\.png: is a PDF file, not an image"):
        DocumentFile.from_images(pdf_as_png)
    with pytest.raises(UnsupportedFormat, match="not a video"):
        DocumentFile.from_video(png_as_pdf)


def test_missing_file_directory_and_unknown_formats(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match=r"nope\.png: no such file"):
        DocumentFile.from_path(tmp_path / "nope.png")
    with pytest.raises(UnreadableFile, match="is a directory"):
        DocumentFile.from_images(tmp_path)
    heic = tmp_path / "photo.heic"
    heic.write_bytes(b"\x00\x00\x00\x18ftypheic" + bytes(64))
    with pytest.raises(UnsupportedFormat, match="HEIF"):
        DocumentFile.from_path(heic)
    text = tmp_path / "notes.txt"
    text.write_text("just some text\n" * 10)
    with pytest.raises(UnsupportedFormat, match=r"notes\.txt: unrecognised format"):
        DocumentFile.from_path(text)


def test_from_path_arguments(tmp_path: Path) -> None:
    data = make_pdf(pages=2)
    assert len(DocumentFile.from_path(data, pages=[1], fps=3)) == 1  # fps is for videos: ignored for a PDF
    with pytest.raises(TypeError, match="colour"):
        DocumentFile.from_path(data, colour="red")


def test_all_reader_errors_share_the_base_class() -> None:
    for cls in (UnsupportedFormat, CorruptFile, PasswordRequired, LimitExceeded, UnreadableFile):
        assert issubclass(cls, VisionError)
    err = CorruptFile("a.png", "truncated")
    assert str(err) == "a.png: truncated" and err.source == "a.png" and err.reason == "truncated"
