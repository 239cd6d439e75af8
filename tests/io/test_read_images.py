"""DocumentFile.from_images: every input kind, format, colour mode, EXIF orientation and limit."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from io_fixtures import encode_image
from PIL import Image

from vision.errors import LimitExceeded, UnsupportedFormat
from vision.io import DocumentFile, PageImage
from vision.settings import Limits

LOSSLESS = ["PNG", "BMP", "GIF", "TIFF"]


def _expected(rgb_image: Image.Image) -> np.ndarray:
    return np.asarray(rgb_image)


@pytest.mark.parametrize("fmt", LOSSLESS + ["WEBP"])
def test_lossless_formats_from_path_bytes_and_file(tmp_path: Path, rgb_image: Image.Image, fmt: str) -> None:
    kwargs = {"lossless": True} if fmt == "WEBP" else {}
    data = encode_image(rgb_image, fmt, **kwargs)
    path = tmp_path / f"page.{fmt.lower()}"
    path.write_bytes(data)
    for source in (path, str(path), data, io.BytesIO(data)):
        doc = DocumentFile.from_images(source)
        assert doc.kind == "image" and len(doc) == 1
        page = doc[0]
        assert isinstance(page, PageImage)
        assert page.image.dtype == np.uint8 and page.image.flags.c_contiguous
        np.testing.assert_array_equal(page.image, _expected(rgb_image))
        assert page.original_size == (20, 40) and page.index == 0
    assert DocumentFile.from_images(path).source == str(path)


def test_jpeg_is_close(rgb_image: Image.Image) -> None:
    page = DocumentFile.from_images(encode_image(rgb_image, "JPEG", quality=95))[0]
    assert page.image.shape == (20, 40, 3)
    assert np.abs(page.image.astype(int) - _expected(rgb_image)).mean() < 8


def test_gif_reads_first_frame_only(rgb_image: Image.Image) -> None:
    second = rgb_image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    data = encode_image(rgb_image, "GIF", save_all=True, append_images=[second])
    assert Image.open(io.BytesIO(data)).n_frames == 2
    doc = DocumentFile.from_images(data)
    assert len(doc) == 1
    np.testing.assert_array_equal(doc[0].image, _expected(rgb_image))


def test_multipage_tiff_gives_one_page_each(rgb_image: Image.Image) -> None:
    pages = [rgb_image, rgb_image.convert("L"), rgb_image.rotate(180)]
    data = encode_image(pages[0], "TIFF", save_all=True, append_images=pages[1:], compression="tiff_lzw")
    doc = DocumentFile.from_images(data)
    assert len(doc) == 3
    decoded = list(doc)
    assert [p.index for p in decoded] == [0, 1, 2]
    np.testing.assert_array_equal(decoded[0].image, _expected(rgb_image))
    gray = np.asarray(pages[1])
    np.testing.assert_array_equal(decoded[1].image, np.stack([gray] * 3, axis=2))
    np.testing.assert_array_equal(decoded[2].image, np.asarray(pages[2]))
    np.testing.assert_array_equal(doc[-1].image, decoded[2].image)
    assert [p["frame"] for p in doc.describe()["pages"]] == [0, 1, 2]


def test_exif_orientation_is_applied(rgb_image: Image.Image) -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 CW to display"
    page = DocumentFile.from_images(encode_image(rgb_image, "JPEG", quality=95, exif=exif.tobytes()))[0]
    assert page.image.shape == (40, 20, 3)
    top, bottom = page.image[:15].reshape(-1, 3).mean(0), page.image[25:].reshape(-1, 3).mean(0)
    assert top[0] > 200 and top[2] < 60  # the red left half is now on top
    assert bottom[2] > 200 and bottom[0] < 60


def test_grayscale_palette_bilevel_and_cmyk(rgb_image: Image.Image) -> None:
    expected = _expected(rgb_image)
    gray = DocumentFile.from_images(encode_image(rgb_image.convert("L"), "PNG"))[0].image
    assert (gray[..., 0] == gray[..., 1]).all() and (gray[..., 1] == gray[..., 2]).all()
    np.testing.assert_array_equal(gray[..., 0], np.asarray(rgb_image.convert("L")))
    palette = DocumentFile.from_images(encode_image(rgb_image.convert("P"), "PNG"))[0].image
    np.testing.assert_array_equal(palette, expected)
    bilevel = DocumentFile.from_images(encode_image(rgb_image.convert("1"), "PNG"))[0].image
    assert set(np.unique(bilevel)) <= {0, 255}
    cmyk = DocumentFile.from_images(encode_image(rgb_image.convert("CMYK"), "TIFF"))[0].image
    np.testing.assert_array_equal(cmyk, expected)


def test_alpha_is_composited_on_white() -> None:
    rgba = np.zeros((2, 3, 4), np.uint8)
    rgba[0, 0] = (0, 0, 0, 0)  # transparent -> white paper
    rgba[0, 1] = (10, 20, 30, 255)  # opaque -> unchanged
    rgba[0, 2] = (0, 0, 0, 128)  # half black -> mid gray
    image = DocumentFile.from_images(encode_image(Image.fromarray(rgba, "RGBA"), "PNG"))[0].image
    assert tuple(image[0, 0]) == (255, 255, 255)
    assert tuple(image[0, 1]) == (10, 20, 30)
    assert tuple(image[0, 2]) == (127, 127, 127)
    la = Image.fromarray(rgba[..., [0, 3]], "LA")
    assert tuple(DocumentFile.from_images(encode_image(la, "PNG"))[0].image[0, 0]) == (255, 255, 255)
    palette = Image.fromarray(rgba, "RGBA").convert("P")
    palette.info["transparency"] = palette.getpixel((0, 0))
    assert tuple(
        DocumentFile.from_images(encode_image(palette, "PNG", transparency=palette.getpixel((0, 0))))[
            0
        ].image[0, 0]
    ) == (255, 255, 255)


def test_sixteen_bit_is_scaled_to_eight() -> None:
    values = np.array([[0, 257, 32896, 65535]], np.uint16)
    for fmt in ("PNG", "TIFF"):
        image = DocumentFile.from_images(encode_image(Image.fromarray(values), fmt))[0].image
        np.testing.assert_array_equal(image[0, :, 0], [0, 1, 128, 255])
        assert image.shape == (1, 4, 3)


def test_numpy_and_pil_inputs(rgb_image: Image.Image) -> None:
    arr = _expected(rgb_image)
    rgba = np.dstack([arr, np.full(arr.shape[:2], 255, np.uint8)])
    doc = DocumentFile.from_images(
        [
            arr,
            arr[..., 0],
            arr[..., :1],
            rgba,
            arr.astype(np.uint16) * 257,
            arr / 255.0,
            arr[..., 0] > 0,
            rgb_image,
        ]
    )
    assert len(doc) == 8 and doc.source == "8 images"
    pages = list(doc)
    for i in (0, 3, 4, 5, 7):
        np.testing.assert_array_equal(pages[i].image, arr)
    np.testing.assert_array_equal(pages[1].image[..., 2], arr[..., 0])
    assert pages[6].image.max() == 255 and pages[2].source == "<array>" and pages[7].source == "<PIL image>"
    with pytest.raises(UnsupportedFormat, match="shape"):
        DocumentFile.from_images(np.zeros((4, 4, 2), np.uint8))[0]
    with pytest.raises(UnsupportedFormat, match="dtype"):
        DocumentFile.from_images(np.zeros((4, 4), np.int64))[0]


def test_mixed_list_indexing_and_iteration(tmp_path: Path, rgb_image: Image.Image) -> None:
    path = tmp_path / "a.png"
    path.write_bytes(encode_image(rgb_image, "PNG"))
    doc = DocumentFile.from_images([path, encode_image(rgb_image, "BMP")])
    assert len(doc) == 2 and [p.index for p in doc] == [0, 1]
    assert doc[-1].source == "<bytes>" and doc[0].source == str(path)
    with pytest.raises(IndexError):
        doc[2]
    with pytest.raises(ValueError):
        DocumentFile.from_images([])


def test_declared_dpi_is_reported(rgb_image: Image.Image) -> None:
    page = DocumentFile.from_images(encode_image(rgb_image, "PNG", dpi=(300, 300)))[0]
    assert page.dpi == pytest.approx(300, abs=0.1)
    assert DocumentFile.from_images(encode_image(rgb_image, "BMP"))[0].dpi in (None, pytest.approx(96, abs=1))


def test_page_limit_counts_tiff_pages(rgb_image: Image.Image) -> None:
    data = encode_image(rgb_image, "TIFF", save_all=True, append_images=[rgb_image, rgb_image])
    with pytest.raises(LimitExceeded, match="max_pages"):
        DocumentFile.from_images(data, limits=Limits(max_pages=2))
    with pytest.raises(LimitExceeded, match="max_pages"):
        DocumentFile.from_images([rgb_image] * 3, limits=Limits(max_pages=2))
    assert len(DocumentFile.from_images(data, limits=Limits(max_pages=3))) == 3


def test_pixel_limit_checked_before_decoding(rgb_image: Image.Image) -> None:
    with pytest.raises(LimitExceeded, match="800 pixels"):
        DocumentFile.from_images(encode_image(rgb_image, "PNG"), limits=Limits(max_pixels=799))
    with pytest.raises(LimitExceeded, match="max_pixels"):
        DocumentFile.from_images(np.zeros((100, 100), np.uint8), limits=Limits(max_pixels=999))


def test_byte_limit_checked_before_reading(tmp_path: Path, rgb_image: Image.Image) -> None:
    data = encode_image(rgb_image, "BMP")
    path = tmp_path / "big.bmp"
    path.write_bytes(data)
    limits = Limits(max_bytes=len(data) // 2)

    class CountingReader(io.RawIOBase):
        def __init__(self) -> None:
            self.inner, self.read_total = io.BytesIO(data), 0

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            chunk = self.inner.read(size)
            self.read_total += len(chunk)
            return chunk

    stream = CountingReader()
    for source in (path, data, stream):
        with pytest.raises(LimitExceeded, match="max_bytes"):
            DocumentFile.from_images(source, limits=limits)
    assert stream.read_total == len(data) // 2 + 1  # reads max_bytes + 1 bytes at most, never the rest
    assert len(DocumentFile.from_images(path, limits=Limits(max_bytes=len(data)))) == 1
