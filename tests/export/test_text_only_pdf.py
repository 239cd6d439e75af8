"""The text-only PDF page of OCRmyPDF's sandwich renderer: page size from the image and its resolution, one
content stream, Tesseract's font name, and every word extractable over its box."""

import io

import pikepdf
import pypdfium2 as pdfium
import pytest

from vision.export.pdf_layer import text_only_pdf
from vision.structures import Block, Line, Page, Word


def test_words_sit_over_their_boxes_on_a_page_of_the_image_size():
    words = [Word("Total", 0.9, (0.10, 0.20, 0.30, 0.26)), Word("42.00", 0.8, (0.60, 0.20, 0.80, 0.26))]
    page = Page(0, (1100, 850), [Block([Line(words)]), Block([Line([])])])
    data = text_only_pdf(page, 100.0)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        (only,) = pdf.pages
        assert [float(v) for v in only.mediabox] == pytest.approx([0, 0, 612, 792], abs=0.01)
        assert isinstance(only.obj.Contents, pikepdf.Stream)  # one stream: the sandwich renderer reads it whole
        assert "/f-0-0" in only.obj.Resources.Font
    document = pdfium.PdfDocument(data)
    text = document[0].get_textpage()
    assert text.get_text_range().split() == ["Total", "42.00"]
    for first, word in ((0, words[0]), (6, words[1])):  # the first character of each word
        left, bottom, right, top = text.get_charbox(first)
        x0, y0, x1, y1 = word.geometry
        assert x0 * 612 - 1 <= left < right <= x1 * 612 + 1
        assert (1 - y1) * 792 - 2 <= bottom < top <= (1 - y0) * 792 + 2
    document.close()


def test_a_page_without_words_is_an_empty_page():
    data = text_only_pdf(Page(0, (300, 200), []), 72.0)
    document = pdfium.PdfDocument(data)
    assert document[0].get_size() == pytest.approx((200, 300), abs=0.01)
    assert document[0].get_textpage().get_text_range() == ""
    document.close()
