from pathlib import Path

import pytest
from lxml import etree

from vision.export.alto import ALTO_NS, export_alto
from vision.structures import Block, Document, Line, Page, Word, box_to_pixels

NS = {"a": ALTO_NS}
SCHEMA = etree.XMLSchema(etree.parse(str(Path(__file__).with_name("alto-4-2-subset.xsd"))))


def _parse(text: str) -> etree._Element:
    root = etree.fromstring(text.encode("utf-8"))
    SCHEMA.assertValid(root)  # element order, required attributes, float types, unique IDs, WC in [0, 1]
    return root


def _box(node: etree._Element) -> tuple[int, int, int, int]:
    x, y, w, h = (int(node.get(k)) for k in ("HPOS", "VPOS", "WIDTH", "HEIGHT"))
    return (x, y, x + w, y + h)


def test_validates_and_declares_v4_pixels(document):
    root = _parse(export_alto(document))
    assert root.tag == f"{{{ALTO_NS}}}alto" and root.get("SCHEMAVERSION") == "4.2"
    assert "alto-4-2.xsd" in root.get("{http://www.w3.org/2001/XMLSchema-instance}schemaLocation")
    assert root.findtext("a:Description/a:MeasurementUnit", namespaces=NS) == "pixel"
    assert root.findtext(".//a:softwareName", namespaces=NS) == "vision"
    assert root.findtext(".//a:fileName", namespaces=NS) == "sample.pdf"


def test_pages_and_strings_match_the_document(document):
    root = _parse(export_alto(document))
    pages = root.findall("a:Layout/a:Page", NS)
    assert len(pages) == 2
    for node, page in zip(pages, document.pages, strict=True):
        assert (int(node.get("HEIGHT")), int(node.get("WIDTH"))) == page.dimensions
        assert node.get("PHYSICAL_IMG_NR") == str(page.page_idx + 1)
        strings = node.findall("a:PrintSpace/a:TextBlock/a:TextLine/a:String", NS)
        assert [s.get("CONTENT") for s in strings] == [w.value for w in page.words]
        for string, word in zip(strings, page.words, strict=True):
            assert _box(string) == box_to_pixels(word.geometry, page.dimensions)
            assert float(string.get("WC")) == pytest.approx(word.confidence, abs=5e-5)


def test_spaces_fill_the_gaps_between_words(document):
    line = _parse(export_alto(document)).find(".//a:TextLine", NS)
    children = [etree.QName(c).localname for c in line]
    assert children == ["String", "SP", "String", "SP", "String"]
    for left, sp, right in zip(line[0:-1:2], line[1::2], line[2::2], strict=True):
        assert int(sp.get("HPOS")) == _box(left)[2]
        assert int(sp.get("HPOS")) + int(sp.get("WIDTH")) == int(right.get("HPOS"))


def test_blocks_lines_and_regions(document):
    space = _parse(export_alto(document)).find("a:Layout/a:Page/a:PrintSpace", NS)
    blocks = space.findall("a:TextBlock", NS)
    assert len(blocks) == 2  # the empty block is left out: ALTO forbids a TextLine without a String
    assert _box(blocks[0]) == box_to_pixels(document.pages[0].blocks[0].geometry, (120, 160))
    illustrations = space.findall("a:Illustration", NS)
    assert [i.get("TYPE") for i in illustrations] == ["figure", "table"]
    assert _box(illustrations[1]) == box_to_pixels((0.1, 0.8, 0.9, 0.95), (120, 160))


def test_awkward_text_and_confidences_stay_valid():
    words = [Word('a"<&>\x07', 1.5, (0.0, 0.0, 0.2, 0.1)), Word("nan", float("nan"), (0.3, 0.0, 0.5, 0.1))]
    root = _parse(export_alto(Document(pages=[Page(0, (50, 50), blocks=[Block([Line(words)])])])))
    strings = root.findall(".//a:String", NS)
    assert [s.get("CONTENT") for s in strings] == ['a"<&>\ufffd', "nan"]
    assert [s.get("WC") for s in strings] == ["1.0000", "0.0000"]


def test_a_page_without_text_is_valid_and_no_pages_is_refused():
    root = _parse(export_alto(Document(pages=[Page(0, (30, 40))])))
    assert len(root.find(".//a:PrintSpace", NS)) == 0
    with pytest.raises(ValueError, match="at least one page"):
        export_alto(Document())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('WC="0.9900"', 'WC="1.5"'),
        ('CONTENT="Hello" ', ""),
        ('ID="page_1"', ""),
        ("<Layout>", "<Layout><Oops/>"),
    ],
)
def test_the_schema_rejects_broken_alto(document, old, new):
    text = export_alto(document)
    assert old in text
    with pytest.raises(etree.DocumentInvalid):
        _parse(text.replace(old, new, 1))


def test_outlines_and_rotated_quads_become_shape_polygons(document):
    arc = ((0.1, 0.5), (0.3, 0.3), (0.5, 0.5), (0.5, 0.7), (0.3, 0.5), (0.1, 0.7))
    page = Page(0, (100, 200), [Block([Line([Word("flat", 0.9, (0.6, 0.1, 0.9, 0.2)),
                                             Word("arc", 0.8, (0.1, 0.3, 0.5, 0.7), outline=arc)])])])
    strings = _parse(export_alto(Document([page]))).findall(".//a:String", NS)  # schema-valid with shapes
    assert strings[0].find("a:Shape", NS) is None
    assert strings[1].find("a:Shape/a:Polygon", NS).get("POINTS") == "20 50 60 30 100 50 100 70 60 50 20 70"
    tilted = next(s for s in _parse(export_alto(document)).iter(f"{{{ALTO_NS}}}String")
                  if s.get("CONTENT") == "tilted")
    assert tilted.find("a:Shape/a:Polygon", NS).get("POINTS") == "72 72 136 56 140 72 76 88"
