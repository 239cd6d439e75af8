"""Searchable PDFs on the original (``vision.export.searchable``): 10 scans and 10 born-digital PDFs made
here. Scans keep their images byte for byte and grow by at most 10 % + 30 KB per page; the text layer's
words land in their boxes (pdfium's character boxes, within 0.5 % of the page); born-digital pages are
left unchanged; ``--redo-ocr`` replaces an earlier layer; rotate and deskew turn the output page."""

import io

import numpy as np
import pikepdf
import pytest
from _pdf_inputs import (
    SCANS,
    born_digital_pdf,
    content_bytes,
    extracted_boxes,
    image_streams,
    scan_pdf,
    truth_document,
)

from vision.errors import PasswordRequired
from vision.export.pdf_redo import strip_invisible_text
from vision.export.searchable import SearchableOptions, searchable_pdf
from vision.structures import Block, Document, Line, Page, Word

BOX_TOLERANCE = 0.005  # of the page side: pdfium returns character boxes in whole device units of 1e-6


@pytest.mark.parametrize("index", range(len(SCANS)))
def test_scans_keep_their_images_and_get_words_in_their_boxes(index):
    data, truth = scan_pdf(index)
    out = searchable_pdf(data, truth_document(truth), SearchableOptions())
    assert len(out) <= 1.1 * len(data) + 30_000
    assert image_streams(out) == image_streams(data)
    original = content_bytes(data)[0]
    assert original in content_bytes(out)[0]  # the page's own drawing is still there, byte for byte
    boxes = extracted_boxes(out, 0, truth)
    np.testing.assert_allclose(boxes, [box for _, box in truth], atol=BOX_TOLERANCE)


@pytest.mark.parametrize("index", range(10))
def test_born_digital_pages_are_left_as_they_are(index):
    data = born_digital_pdf(index)
    doc = truth_document([("Invoice", (0.1, 0.1, 0.3, 0.2))])  # what OCR would have said: not written
    out = searchable_pdf(data, doc, SearchableOptions())
    assert content_bytes(out) == content_bytes(data)
    with pikepdf.open(io.BytesIO(out)) as pdf:
        assert "/VisionGlyphless" not in {
            str(f.get("/BaseFont")) for f in pdf.pages[0].Resources.Font.values()
        }


def test_mixed_document_gets_a_layer_on_its_scanned_page_only():
    scan, truth = scan_pdf(0)
    with pikepdf.open(io.BytesIO(born_digital_pdf(0))) as pdf, pikepdf.open(io.BytesIO(scan)) as other:
        pdf.pages.append(other.pages[0])
        buf = io.BytesIO()
        pdf.save(buf)
    data = buf.getvalue()
    doc = truth_document(truth, page_idx=1)
    doc.pages.insert(0, truth_document([("ignored", (0.1, 0.1, 0.2, 0.2))]).pages[0])
    out = searchable_pdf(data, doc, SearchableOptions())
    assert content_bytes(out)[0] == content_bytes(data)[0]
    assert extracted_boxes(out, 1, truth)  # the scan's words, and nothing else
    everything = searchable_pdf(data, doc, SearchableOptions(skip_text=False))
    assert content_bytes(everything)[0] != content_bytes(data)[0]


def test_redo_ocr_replaces_an_earlier_layer_and_keeps_the_image():
    data, truth = scan_pdf(1)
    wrong = [("Wrong", box) for _, box in truth[:3]]
    first = searchable_pdf(data, truth_document(wrong), SearchableOptions())
    with pikepdf.open(io.BytesIO(first)) as pdf:
        assert strip_invisible_text(pdf) == 1
        buf = io.BytesIO()
        pdf.save(buf)
    stripped = buf.getvalue()
    second = searchable_pdf(stripped, truth_document(truth), SearchableOptions())
    assert image_streams(second) == image_streams(data)
    boxes = extracted_boxes(second, 0, truth)  # all of the new words, none of the old
    np.testing.assert_allclose(boxes, [box for _, box in truth], atol=BOX_TOLERANCE)


def test_rotate_pages_turns_the_page_and_keeps_words_on_the_content():
    data, truth = scan_pdf(0)
    doc = truth_document(truth)
    doc.pages[0].orientation = 90
    out = searchable_pdf(data, doc, SearchableOptions(rotate_pages=True))
    with pikepdf.open(io.BytesIO(out)) as pdf:
        assert int(pdf.pages[0].obj.Rotate) == 90
    expected = [(t, (1 - y1, x0, 1 - y0, x1)) for t, (x0, y0, x1, y1) in truth]  # the same spots, turned 90
    boxes = extracted_boxes(out, 0, expected)
    np.testing.assert_allclose(boxes, [box for _, box in expected], atol=BOX_TOLERANCE)


def _skewed_word(angle_deg: float, dims: tuple[int, int]) -> Word:
    h, w = dims
    a = np.radians(angle_deg)
    x0, y0, length, height = 100.0, 150.0, 400.0, 30.0
    p0 = np.array([x0, y0])
    along, down = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    quad = [p0, p0 + length * along, p0 + length * along + height * down, p0 + height * down]
    rel = [(float(x / w), float(y / h)) for x, y in quad]
    xs, ys = [p[0] for p in rel], [p[1] for p in rel]
    return Word("Invoice", 0.9, (min(xs), min(ys), max(xs), max(ys)), polygon=tuple(rel))


def test_deskew_levels_content_and_text_together():
    data, _ = scan_pdf(0)
    dims = (400, 700)
    word = _skewed_word(4.0, dims)
    doc = Document(pages=[Page(0, dims, blocks=[Block([Line([word])])])])
    for deskew, expect_level in ((False, False), (True, True)):
        out = searchable_pdf(data, doc, SearchableOptions(deskew=deskew))
        ((_, y0, _, y1),) = extracted_boxes(out, 0, [("Invoice", word.geometry)])
        height_pt = (y1 - y0) * 400 * 72 / 120
        assert (height_pt < 20) == expect_level, height_pt  # 30 px = 18 pt level; skewed it spans 34 pt
        assert image_streams(out) == image_streams(data)


def test_image_inputs_are_embedded_losslessly_at_their_resolution():
    from PIL import Image

    from vision.export.source_pdf import image_to_pdf

    rgb = (np.random.default_rng(0).integers(0, 255, (60, 80, 3))).astype(np.uint8)
    for fmt, dpi in (("JPEG", (200, 200)), ("TIFF", (300, 300)), ("PNG", None)):
        buf = io.BytesIO()
        Image.fromarray(rgb).save(buf, format=fmt, **({"dpi": dpi} if dpi else {}))
        pdf_data = image_to_pdf(buf.getvalue(), "x", default_dpi=150)
        with pikepdf.open(io.BytesIO(pdf_data)) as pdf:
            page = pdf.pages[0]
            width_pt = float(page.mediabox[2]) - float(page.mediabox[0])
            assert width_pt == pytest.approx(80 * 72 / (dpi[0] if dpi else 150), abs=0.01)
            (image,) = page.get_images().values()
            raw = bytes(image.read_raw_bytes())
            if fmt == "JPEG":
                assert raw == buf.getvalue()  # passthrough
            else:
                decoded = np.asarray(pikepdf.PdfImage(image).as_pil_image().convert("RGB"))
                np.testing.assert_array_equal(decoded, rgb)


def test_alpha_images_are_flattened_and_still_lossless_in_colour():
    from PIL import Image

    from vision.export.source_pdf import image_to_pdf

    rgba = np.zeros((20, 30, 4), np.uint8)
    rgba[..., :3], rgba[..., 3] = 90, 255
    buf = io.BytesIO()
    Image.fromarray(rgba).save(buf, format="PNG")
    with pikepdf.open(io.BytesIO(image_to_pdf(buf.getvalue(), "x", default_dpi=72))) as pdf:
        (image,) = pdf.pages[0].get_images().values()
        assert np.asarray(pikepdf.PdfImage(image).as_pil_image().convert("RGB")).max() == 90


def test_encrypted_inputs_need_their_password_and_come_out_unencrypted():
    data, truth = scan_pdf(0)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        buf = io.BytesIO()
        pdf.save(buf, encryption=pikepdf.Encryption(owner="o", user="secret"))
    with pytest.raises(PasswordRequired):
        searchable_pdf(buf.getvalue(), truth_document(truth), SearchableOptions())
    out = searchable_pdf(buf.getvalue(), truth_document(truth), SearchableOptions(password="secret"))
    with pikepdf.open(io.BytesIO(out)) as pdf:
        assert not pdf.is_encrypted


def test_words_of_a_line_stay_separate_words_even_when_their_boxes_touch():
    data, _ = scan_pdf(0)
    words = [
        Word(t, 0.9, (0.1 + 0.1 * k, 0.3, 0.2 + 0.1 * k - 0.001, 0.34))
        for k, t in enumerate(["118", "Harbor", "St"])
    ]
    doc = Document(pages=[Page(0, (400, 700), blocks=[Block([Line(words)])])])
    out = searchable_pdf(data, doc, SearchableOptions())
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(out)
    assert document[0].get_textpage().get_text_range().split() == ["118", "Harbor", "St"]
    document.close()
    boxes = extracted_boxes(out, 0, [(w.value, w.geometry) for w in words])  # the spaces add no extent
    np.testing.assert_allclose(boxes, [w.geometry for w in words], atol=BOX_TOLERANCE)
