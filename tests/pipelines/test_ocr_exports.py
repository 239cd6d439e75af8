"""Exports of real OCR output are valid: hOCR and ALTO parse (ALTO against its schema), and the searchable
PDF's text layer gives back each recognised word inside its box."""

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from _ocr_stages import TEXT, InkDetector, TemplateReader, render_page
from lxml import etree

from vision.pipelines.ocr.predictor import ocr_predictor
from vision.pipelines.ocr.orientation import rotate_image
from vision.structures.geometry import box_to_pixels

ALTO_XSD = Path(__file__).parents[1] / "export" / "alto-4-2-subset.xsd"


@pytest.fixture(scope="module")
def document():
    upright, _ = render_page()
    predictor = ocr_predictor(
        det_predictor=InkDetector(), reco_predictor=TemplateReader(), detect_orientation=True
    )
    doc = predictor([upright, rotate_image(upright, 90)])
    assert [p.render().split("\n") for p in doc.pages] == [TEXT, TEXT]
    return doc


def test_hocr_parses_with_every_word_and_box(document):
    root = etree.fromstring(document.export_hocr().encode())
    ns = {"x": "http://www.w3.org/1999/xhtml"}
    pages = root.findall(".//x:div[@class='ocr_page']", ns)
    assert len(pages) == 2
    for node, page in zip(pages, document.pages):
        spans = node.findall(".//x:span[@class='ocrx_word']", ns)
        assert [s.text for s in spans] == [w.value for w in page.words]
        for span, word in zip(spans, page.words):
            bbox = tuple(int(v) for v in span.get("title").split(";")[0].split()[1:5])
            assert bbox == box_to_pixels(word.geometry, page.dimensions)


def test_alto_validates_against_its_schema(document):
    root = etree.fromstring(document.export_alto().encode())
    etree.XMLSchema(etree.parse(str(ALTO_XSD))).assertValid(root)
    strings = root.findall(".//{*}String")
    assert [s.get("CONTENT") for s in strings] == [w.value for w in document.words()]


def test_searchable_pdf_gives_the_words_at_their_places(document, tmp_path):
    path = tmp_path / "ocr.pdf"
    document.save_pdf(path)
    pdf = pdfium.PdfDocument(str(path))
    assert len(pdf) == 2
    for pdf_page, page in zip(pdf, document.pages):
        width, height = pdf_page.get_size()
        text = pdf_page.get_textpage()
        assert text.get_text_range().split() == [w.value for w in page.words]
        for word in page.words:
            x0, y0, x1, y1 = word.geometry
            pad = 0.004  # 0.4 % of the page: pdfium's character boxes span the font's ascent and descent
            found = text.get_text_bounded(
                (x0 - pad) * width, (1 - y1 - pad) * height, (x1 + pad) * width, (1 - y0 + pad) * height
            )
            assert found.split() == [word.value]
    pdf.close()
