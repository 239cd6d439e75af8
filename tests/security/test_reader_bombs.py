"""Readers against small hostile files: each is refused from its headers or decoded within bounded memory."""

from __future__ import annotations

import threading
import time
import tracemalloc

import numpy as np
import pytest
from _hostile import pdf_bytes
from bombs import gif_screen_bomb, pdf_forms_bomb, png16_bomb, tiff_pages_bomb

from vision.errors import InvalidPages, LimitExceeded, VisionError
from vision.io import DocumentFile
from vision.io._convert import _scale_16bit, array_to_rgb
from vision.settings import Limits


def test_gif_logical_screen_bomb_is_refused_from_its_header() -> None:
    data = gif_screen_bomb(13_000)  # 35 bytes promising 169 MP
    start = time.perf_counter()
    with pytest.raises(LimitExceeded, match="max_expansion"):
        DocumentFile.from_path(data)
    assert len(data) < 64 and time.perf_counter() - start < 1.0


def test_multi_page_tiff_bomb_is_refused_from_its_headers() -> None:
    data = tiff_pages_bomb(20, 13_000)  # 20 pages of 169 MP sharing one 21 KB strip
    with pytest.raises(LimitExceeded, match="3380000000 pixels in 20 page"):
        DocumentFile.from_path(data)


def test_ordinary_multi_page_tiff_still_reads() -> None:
    data = tiff_pages_bomb(3, 1_000)  # same layout at a size whose data is plausible (1 MP per page)
    with DocumentFile.from_path(data, limits=Limits(max_expansion=10_000)) as doc:
        assert [doc.page_pixels(i) for i in range(len(doc))] == [1_000_000] * 3
        assert doc[2].image.shape == (1_000, 1_000, 3)


def test_16bit_png_decodes_without_wide_copies() -> None:
    """The old converter widened samples to int64 (8 bytes each, several copies); the output is 3 bytes."""
    side = 1_500
    with DocumentFile.from_path(png16_bomb(side)) as doc:
        tracemalloc.start()
        try:
            page = doc[0]
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    pixels = side * side
    assert page.image.shape == (side, side, 3) and page.image.max() == 0
    # RGB output (3 B/px), the 8-bit gray plane (1 B/px), Pillow's 16-bit export and numpy's view of it
    # (2 B/px each): 7.2 B/px measured. Widening to int64 alone costs 8 B/px per temporary (over 30 in all).
    assert peak < 10 * pixels, f"peak {peak / pixels:.1f} bytes per pixel"


def test_16bit_conversion_matches_rounding_formula() -> None:
    values = np.arange(65536, dtype=np.uint16).reshape(256, 256)
    expected = ((values.astype(np.int64) * 255 + 32767) // 65535).astype(np.uint8)
    assert np.array_equal(array_to_rgb(values)[..., 0], expected)
    wide = np.array([[-5, 0, 32768, 65535, 70000]], dtype=np.int32)  # Pillow's mode "I": clipped first
    assert _scale_16bit(wide).tolist() == [[0, 0, 128, 255, 255]]


def test_pdf_bomb_is_stopped_at_its_time_limit() -> None:
    data = pdf_forms_bomb(depth=5, fanout=10)  # 10**5 nested form draws: a minute of PDFium time here
    limits = Limits(pdf_timeout_s=1.0)
    start = time.perf_counter()
    with (
        DocumentFile.from_pdf(data, dpi=72, limits=limits) as doc,
        pytest.raises(LimitExceeded, match="pdf_timeout_s"),
    ):
        doc[0]
    assert len(data) < 4096 and time.perf_counter() - start < 10.0


def test_pdf_worker_cpu_limit_ends_a_runaway_render() -> None:
    limits = Limits(pdf_timeout_s=60.0, pdf_cpu_s=1)
    bomb = pdf_forms_bomb(depth=5, fanout=10)
    with (
        DocumentFile.from_pdf(bomb, dpi=72, limits=limits) as doc,
        pytest.raises(LimitExceeded, match="pdf_cpu_s"),
    ):
        doc[0]


def test_a_hostile_pdf_does_not_block_other_pdfs() -> None:
    """No process-wide lock is held across a render: an ordinary PDF opens and renders meanwhile."""
    bomb = DocumentFile.from_pdf(pdf_forms_bomb(depth=5, fanout=10), dpi=72, limits=Limits(pdf_timeout_s=4.0))
    errors: list[BaseException] = []

    def render_bomb() -> None:
        try:
            bomb[0]
        except VisionError as exc:
            errors.append(exc)

    thread = threading.Thread(target=render_bomb)
    thread.start()
    time.sleep(0.3)  # the bomb is inside PDFium now
    with DocumentFile.from_pdf(pdf_bytes(1), dpi=72) as doc:
        assert doc[0].image.shape == (100, 200, 3)
    assert thread.is_alive(), "the ordinary PDF should finish while the bomb still renders"
    thread.join(30)
    bomb.close()
    assert len(errors) == 1 and isinstance(errors[0], LimitExceeded)


def test_pages_out_of_range_are_a_vision_error() -> None:
    with pytest.raises(InvalidPages, match="page 5 out of range"):
        DocumentFile.from_pdf(pdf_bytes(2), pages=[5])
