"""The searchable PDF is read back with pypdfium2: every word must come back, in order, inside its box."""

import os
import stat

import numpy as np
import pypdfium2 as pdfium
import pytest

import vision.export.pdf as pdf_export
from vision.export.pdf import find_unicode_font, save_pdf
from vision.structures import Block, Document, Line, Page, Word
from vision.structures.geometry import polygon_to_box

TOLERANCE = 0.005  # of the page size; measured worst case 1.3e-4 (pdfium boxes span the font ascent..descent)


def _extracted_words(page: pdfium.PdfPage, words: list[Word]) -> list[tuple[str, tuple[float, ...]]]:
    """For each expected word, its characters as pdfium extracts them and their union box (relative)."""
    width, height = page.get_size()
    text = page.get_textpage()
    chars = []
    for i in range(text.count_chars()):
        char = text.get_text_range(i, 1)
        if char.strip():  # pdfium adds spaces and line breaks between words; they are not ours
            left, bottom, right, top = text.get_charbox(i, loose=True)
            chars.append((char, (left / width, 1 - top / height, right / width, 1 - bottom / height)))
    found, pos = [], 0
    for word in words:
        n = len(word.value.replace(" ", ""))
        group, pos = chars[pos : pos + n], pos + n
        boxes = [c[1] for c in group]
        union = (
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )
        found.append(("".join(c[0] for c in group), union))
    assert pos == len(chars), "extra text in the PDF"
    return found


def _check_words(pdf_page: pdfium.PdfPage, page: Page) -> None:
    for word, (text, box) in zip(page.words, _extracted_words(pdf_page, page.words), strict=True):
        assert text == word.value
        expected = polygon_to_box(word.polygon) if word.polygon else word.geometry
        assert box == pytest.approx(expected, abs=TOLERANCE), word.value


def test_words_come_back_inside_their_boxes(document, tmp_path):
    path = tmp_path / "out.pdf"
    document.save_pdf(path)
    pdf = pdfium.PdfDocument(str(path))
    assert len(pdf) == len(document.pages)
    for pdf_page, page in zip(pdf, document.pages, strict=True):
        height, width = page.dimensions
        assert pdf_page.get_size() == pytest.approx((width * 72 / 150, height * 72 / 150))
        _check_words(pdf_page, page)
    pdf.close()


def test_non_ascii_latin_round_trips_and_bounded_text_finds_each_word(tmp_path):
    words = [
        Word(v, 0.9, (0.05 + 0.19 * i, 0.4, 0.2 + 0.19 * i, 0.5))
        for i, v in enumerate(["é", "ü", "€", "Ça", "Øre"])
    ]
    page = Page(0, (400, 1000), blocks=[Block([Line(words)])])
    save_pdf(Document(pages=[page]), tmp_path / "latin.pdf", dpi=72)
    pdf_page = pdfium.PdfDocument(str(tmp_path / "latin.pdf"))[0]
    width, height = pdf_page.get_size()
    text = pdf_page.get_textpage()
    for word in words:
        x0, y0, x1, y1 = word.geometry
        found = text.get_text_bounded(x0 * width, (1 - y1) * height, x1 * width, (1 - y0) * height)
        assert found.strip() == word.value
    _check_words(pdf_page, page)


def test_text_layer_is_invisible_and_the_image_fills_the_page(tmp_path):
    image = np.zeros((60, 80, 3), dtype=np.uint8)
    image[:, :40] = (200, 30, 30)
    image[20:, 40:] = (20, 120, 250)
    words = [Word("Visible?", 1.0, (0.1, 0.1, 0.9, 0.5))]
    doc = Document(
        pages=[
            Page(0, (60, 80), [Block([Line(words)])], image=image),
            Page(1, (60, 80), [Block([Line(words)])]),
        ]
    )
    save_pdf(doc, tmp_path / "v.pdf", dpi=72)
    pdf = pdfium.PdfDocument(str(tmp_path / "v.pdf"))
    drawn = pdf[0].render(scale=1, rev_byteorder=True).to_numpy()[..., :3]
    assert drawn.shape == image.shape and np.abs(drawn.astype(int) - image).max() <= 2
    blank = pdf[1].render(scale=1, rev_byteorder=True).to_numpy()[..., :3]
    assert (blank == 255).all()  # a missing image leaves a white page, and the words draw nothing
    assert pdf[1].get_textpage().get_text_range() == "Visible?"


def test_writes_atomically(document, tmp_path, monkeypatch):
    path = tmp_path / "doc.pdf"
    path.write_bytes(b"old")
    umask = os.umask(0o022)
    try:
        save_pdf(document, path)
    finally:
        os.umask(umask)
    assert path.read_bytes().startswith(b"%PDF-")
    assert os.listdir(tmp_path) == ["doc.pdf"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # the umask applies, not a temp file's 0600

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(pdf_export.os, "replace", fail)
    path.write_bytes(b"old")
    with pytest.raises(OSError, match="disk full"):
        save_pdf(document, path)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["doc.pdf"]


def test_without_a_unicode_font_latin1_falls_back_and_the_rest_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(pdf_export, "find_unicode_font", lambda: None)
    page = Page(0, (100, 300), [Block([Line([Word("café", 1.0, (0.1, 0.2, 0.5, 0.4))])])])
    save_pdf(Document(pages=[page]), tmp_path / "core.pdf")
    _check_words(pdfium.PdfDocument(str(tmp_path / "core.pdf"))[0], page)
    page.blocks[0].lines[0].words[0].value = "5 €"
    with pytest.raises(FileNotFoundError, match="fonts-dejavu-core"):
        save_pdf(Document(pages=[page]), tmp_path / "euro.pdf")
    assert not (tmp_path / "euro.pdf").exists()


def test_explicit_font_and_bad_arguments(document, tmp_path):
    font = find_unicode_font()
    assert font is not None and font.name == "DejaVuSans.ttf"
    save_pdf(document, tmp_path / "f.pdf", font_path=font)
    assert (tmp_path / "f.pdf").stat().st_size > 0
    with pytest.raises(FileNotFoundError, match="no-such.ttf"):
        save_pdf(document, tmp_path / "g.pdf", font_path=tmp_path / "no-such.ttf")
    with pytest.raises(ValueError, match="dpi"):
        save_pdf(document, tmp_path / "h.pdf", dpi=0)
    with pytest.raises(ValueError, match="empty dimensions"):
        save_pdf(Document(pages=[Page(0, (0, 10))]), tmp_path / "i.pdf")
