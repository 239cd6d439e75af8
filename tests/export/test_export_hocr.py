import re

import pytest
from lxml import etree

from vision.export.hocr import export_hocr
from vision.structures import Block, Document, Line, Page, Word, box_to_pixels

NS = {"h": "http://www.w3.org/1999/xhtml"}


def _parse(text: str) -> etree._Element:
    return etree.fromstring(text.encode("utf-8"))  # strict XML parser: raises on any well-formedness error


def _title(node: etree._Element) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) for part in node.get("title").split(";"))


def test_is_xhtml_with_ocr_system_and_capabilities(document):
    root = _parse(export_hocr(document))
    assert root.tag == "{http://www.w3.org/1999/xhtml}html"
    metas = {m.get("name"): m.get("content") for m in root.iterfind("h:head/h:meta", NS) if m.get("name")}
    assert metas["ocr-system"].startswith("vision ")
    assert set(metas["ocr-capabilities"].split()) >= {
        "ocr_page",
        "ocr_carea",
        "ocr_par",
        "ocr_line",
        "ocrx_word",
    }
    assert root.findtext("h:head/h:title", namespaces=NS) == "sample.pdf"
    ids = [n.get("id") for n in root.iter() if n.get("id")]
    assert len(ids) == len(set(ids))


def test_pages_carry_pixel_bbox_and_ppageno(document):
    pages = _parse(export_hocr(document)).findall(".//h:div[@class='ocr_page']", NS)
    assert len(pages) == 2
    for node, page in zip(pages, document.pages, strict=True):
        props = _title(node)
        assert props["bbox"] == f"0 0 {page.dimensions[1]} {page.dimensions[0]}"
        assert props["ppageno"] == str(page.page_idx)
    assert _title(pages[0])["image"] == '"scan & co.png"'


def test_words_text_boxes_and_confidences_match(document):
    root = _parse(export_hocr(document))
    for node, page in zip(root.findall(".//h:div[@class='ocr_page']", NS), document.pages, strict=True):
        spans = node.findall(
            "h:div[@class='ocr_carea']/h:p[@class='ocr_par']/h:span[@class='ocr_line']/h:span", NS
        )
        assert [s.get("class") for s in spans] == ["ocrx_word"] * len(page.words)
        for span, word in zip(spans, page.words, strict=True):
            assert span.text == word.value
            props = _title(span)
            assert tuple(int(v) for v in props["bbox"].split()) == box_to_pixels(
                word.geometry, page.dimensions
            )
            assert props["x_wconf"] == str(round(word.confidence * 100))
    assert root.findall(".//h:span[@class='ocrx_word']", NS)[1].text == "<café>"


def test_lines_and_blocks_have_boxes_and_empty_ones_are_left_out(document):
    root = _parse(export_hocr(document))
    page0 = root.find(".//h:div[@class='ocr_page']", NS)
    areas = page0.findall("h:div[@class='ocr_carea']", NS)
    assert len(areas) == 2  # the sample's empty block is dropped
    block = document.pages[0].blocks[0]
    assert _title(areas[0])["bbox"] == " ".join(map(str, box_to_pixels(block.geometry, (120, 160))))
    lines = areas[0].findall(".//h:span[@class='ocr_line']", NS)
    assert [_title(n)["bbox"] for n in lines] == [
        " ".join(map(str, box_to_pixels(ln.geometry, (120, 160)))) for ln in block.lines
    ]


def test_markup_and_control_characters_are_escaped():
    word = Word("</span><b>&amp;\x00\x0b", 1.7, (0.0, 0.0, 0.5, 0.5))
    doc = Document(pages=[Page(0, (10, 10), blocks=[Block([Line([word])])], source='a"b;c')], source="x<y")
    text = export_hocr(doc)
    span = _parse(text).find(".//h:span[@class='ocrx_word']", NS)
    assert span.text == "</span><b>&amp;\ufffd\ufffd"
    assert _title(span)["x_wconf"] == "100"  # clamped to 0-100
    assert re.search(r'image "a\\"b;c"', text.replace("&quot;", '"'))


def test_a_page_without_text_is_valid_and_no_pages_is_refused():
    root = _parse(export_hocr(Document(pages=[Page(0, (30, 40))])))
    (page,) = root.find("h:body", NS)
    assert _title(page)["bbox"] == "0 0 40 30" and len(page) == 0
    with pytest.raises(ValueError, match="at least one page"):
        export_hocr(Document())


def _arc_page() -> Page:
    """A 200 x 100 page: a straight word, and a word on an arc with a 6-point outline."""
    arc = ((0.1, 0.5), (0.3, 0.3), (0.5, 0.5), (0.5, 0.7), (0.3, 0.5), (0.1, 0.7))
    return Page(0, (100, 200), [Block([Line([Word("flat", 0.9, (0.6, 0.1, 0.9, 0.2)),
                                             Word("arc", 0.8, (0.1, 0.3, 0.5, 0.7), outline=arc)])])])


def test_outlines_and_rotated_quads_become_poly(document):
    spans = _parse(export_hocr(Document([_arc_page()]))).findall(".//h:span[@class='ocrx_word']", NS)
    assert "poly" not in _title(spans[0])  # a straight word: its bbox says it all
    assert _title(spans[1])["poly"] == "20 50 60 30 100 50 100 70 60 50 20 70"
    tilted = next(s for s in _parse(export_hocr(document)).iter() if s.text == "tilted")
    assert _title(tilted)["poly"] == "72 72 136 56 140 72 76 88"  # the rotated quad, in pixels
