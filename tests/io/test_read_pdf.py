"""DocumentFile.from_pdf: lazy rendering, page selection, passwords, text layer, limits and bounded memory."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from io_fixtures import make_pdf

from vision.errors import LimitExceeded, PasswordRequired
from vision.io import DocumentFile
from vision.settings import Limits


def _ink_box(image: np.ndarray) -> tuple[float, float, float, float]:
    """Relative box around dark pixels of an RGB page."""
    ys, xs = np.nonzero(image.min(axis=2) < 128)
    h, w = image.shape[:2]
    return xs.min() / w, ys.min() / h, (xs.max() + 1) / w, (ys.max() + 1) / h


def _inside(inner: tuple[float, ...], outer: tuple[float, ...], tol: float = 0.01) -> bool:
    return (
        inner[0] >= outer[0] - tol
        and inner[1] >= outer[1] - tol
        and inner[2] <= outer[2] + tol
        and inner[3] <= outer[3] + tol
    )


def test_pages_render_at_dpi_with_metadata(tmp_path: Path) -> None:
    path = tmp_path / "doc.pdf"
    make_pdf(path, pages=3, size=(300, 200), text="Page {i}")
    doc = DocumentFile.from_pdf(path, dpi=96)
    assert doc.kind == "pdf" and len(doc) == 3 and doc.source == str(path)
    pages = list(doc)
    assert [p.index for p in pages] == [0, 1, 2]
    for page in pages:
        assert (
            page.image.shape == (267, 400, 3) and page.image.dtype == np.uint8
        )  # ceil(200*96/72), 300*96/72
        assert page.dpi == 96 and page.original_size == (200, 300) and page.timestamp is None
    assert [w.value for w in pages[2].text_layer] == ["Page", "2"]


def test_text_layer_words_sit_on_the_rendered_ink(tmp_path: Path) -> None:
    page = DocumentFile.from_pdf(make_pdf(text="Hello world"), dpi=144)[0]
    words = page.text_layer
    assert [w.value for w in words] == ["Hello", "world"]
    hello, world = (w.geometry for w in words)
    assert hello[2] <= world[0]  # left to right, no overlap
    assert hello[0] == pytest.approx(20 / 300, abs=0.01)
    assert hello[1] < 50 / 200 < hello[3]  # the baseline at y=50 pt lies inside the box
    union = (hello[0], min(hello[1], world[1]), world[2], max(hello[3], world[3]))
    assert _inside(_ink_box(page.image), union)


def test_rotated_page_maps_text_boxes_like_the_render(tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(make_pdf(text="Rotated words"))
    pdf[0].set_rotation(90)
    buf = io.BytesIO()
    pdf.save(buf)
    page = DocumentFile.from_pdf(buf.getvalue(), dpi=72)[0]
    assert page.image.shape == (300, 200, 3)  # portrait after /Rotate 90
    boxes = [w.geometry for w in page.text_layer]
    assert [w.value for w in page.text_layer] == ["Rotated", "words"]
    union = (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )
    assert union[3] - union[1] > union[2] - union[0]  # vertical text on the rotated page
    assert _inside(_ink_box(page.image), union)


def test_scanned_page_has_an_empty_text_layer() -> None:
    doc = DocumentFile.from_pdf(make_pdf(text=None, image=True), dpi=72)
    page = doc[0]
    assert page.text_layer == []
    assert page.image.min() < 64  # the embedded image was rendered
    assert doc.describe()["pages"][0]["has_text"] is False
    assert DocumentFile.from_pdf(make_pdf(text="x")).describe()["pages"][0]["has_text"] is True


def test_page_selection(tmp_path: Path) -> None:
    data = make_pdf(pages=4, text="Page {i}")
    doc = DocumentFile.from_pdf(data, pages=[2, 0], dpi=36)
    assert len(doc) == 2
    assert [(p.index, p.text_layer[1].value) for p in doc] == [(2, "2"), (0, "0")]
    assert [p.index for p in DocumentFile.from_pdf(data, pages=-1, dpi=36)] == [3]
    assert len(DocumentFile.from_pdf(data, pages=range(1, 4), dpi=36)) == 3
    assert doc[-1].index == 0
    with pytest.raises(ValueError, match="out of range"):
        DocumentFile.from_pdf(data, pages=[4])
    with pytest.raises(ValueError, match="no pages"):
        DocumentFile.from_pdf(data, pages=[])
    with pytest.raises(IndexError):
        doc[2]


def test_inputs_bytes_file_object_and_context_manager(tmp_path: Path) -> None:
    data = make_pdf(text="Stream")
    with DocumentFile.from_pdf(io.BytesIO(data), dpi=36) as doc:
        assert doc.source == "<stream>" and doc[0].text_layer[0].value == "Stream"
    with pytest.raises(ValueError, match="closed"):
        doc[0]
    with open(tmp_path / "f.pdf", "wb") as fh:
        fh.write(data)
    with open(tmp_path / "f.pdf", "rb") as fh:
        assert DocumentFile.from_pdf(fh).source == str(tmp_path / "f.pdf")


def test_password_protected_pdf() -> None:
    data = make_pdf(text="Secret text", user_password="s3cret")
    page = DocumentFile.from_pdf(data, password="s3cret", dpi=72)[0]
    assert [w.value for w in page.text_layer] == ["Secret", "text"]
    with pytest.raises(PasswordRequired, match="password is required"):
        DocumentFile.from_pdf(data)
    with pytest.raises(PasswordRequired, match="wrong password"):
        DocumentFile.from_pdf(data, password="nope")


def test_limits() -> None:
    data = make_pdf(pages=3, size=(300, 200))
    with pytest.raises(LimitExceeded, match="max_pages"):
        DocumentFile.from_pdf(data, limits=Limits(max_pages=2))
    assert len(DocumentFile.from_pdf(data, pages=[0, 1], limits=Limits(max_pages=2))) == 2
    with pytest.raises(LimitExceeded, match="max_pixels"):
        DocumentFile.from_pdf(data, dpi=144, limits=Limits(max_pixels=600 * 400 - 1))
    assert DocumentFile.from_pdf(data, dpi=144, limits=Limits(max_pixels=600 * 400))[0].image.shape == (
        400,
        600,
        3,
    )
    with pytest.raises(LimitExceeded, match="pdf_max_dpi"):
        DocumentFile.from_pdf(data, dpi=2400)
    with pytest.raises(LimitExceeded, match="max_bytes"):
        DocumentFile.from_pdf(data, limits=Limits(max_bytes=100))
    with pytest.raises(ValueError, match="dpi"):
        DocumentFile.from_pdf(data, dpi=0)


_RSS_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    from vision.io import DocumentFile
    doc = DocumentFile.from_pdf(sys.argv[1], dpi=144)
    it = iter(doc)
    first = next(it)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    count, page_bytes = 1, first.image.nbytes
    for page in it:
        count += 1
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"pages": count, "page_bytes": page_bytes, "growth_kib": after - before}))
""")


def test_two_thousand_page_pdf_is_streamed_with_bounded_memory(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(200, 200))
    pdf.set_font("helvetica", size=12)
    for i in range(2000):
        pdf.add_page()
        pdf.text(10, 30, f"page {i}")
    path = tmp_path / "long.pdf"
    pdf.output(str(path))
    out = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["pages"] == 2000 and result["page_bytes"] == 400 * 400 * 3
    all_pages_mib = 2000 * result["page_bytes"] / 2**20  # ~916 MiB if every page were held
    growth_mib = result["growth_kib"] / 1024
    assert growth_mib < 64, (
        f"peak RSS grew by {growth_mib:.0f} MiB while streaming ({all_pages_mib:.0f} MiB if held)"
    )
