"""ALTO v4 (4.2) export in pixel units: ``Page > PrintSpace > TextBlock > TextLine > String / SP``.

Boxes use :func:`vision.structures.geometry.box_to_pixels`; ``WC`` is the word confidence in [0, 1];
an ``SP`` sits in the gap between consecutive words; a word with an outline or a rotated quad holds it as
``Shape > Polygon POINTS="x0 y0 x1 y1 ..."`` (pixel pairs, the form of the proposal that brought shapes
into ALTO; readers take commas and spaces alike). Regions become ``Illustration`` blocks whose
``TYPE`` is the region kind. ALTO forbids a ``TextLine`` without a ``String``, so empty lines and blocks
are left out. Schema: loc.gov/standards/alto/v4/alto-4-2.xsd.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from vision.export._xml import SOFTWARE, VERSION, serialize, unit_confidence, word_points, xml_text
from vision.structures.document import Document, Line, Page
from vision.structures.geometry import BBox, box_to_pixels

__all__ = ["ALTO_NS", "export_alto"]

ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"
_SCHEMA = "http://www.loc.gov/standards/alto/v4/alto-4-2.xsd"
_XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"


def export_alto(doc: Document) -> str:
    """``doc`` as one ALTO v4 XML document (UTF-8 text), one ``Page`` per page.

    Raises:
        ValueError: when ``doc`` has no pages (ALTO's ``Layout`` requires at least one ``Page``).
    """
    if not doc.pages:
        raise ValueError("ALTO needs at least one page; the document has none")
    alto = ET.Element(
        "alto",
        {
            "xmlns": ALTO_NS,
            "xmlns:xsi": _XSI_NS,
            "xsi:schemaLocation": f"{ALTO_NS} {_SCHEMA}",
            "SCHEMAVERSION": "4.2",
        },
    )
    alto.append(_description(doc))
    kinds = sorted({b.kind for p in doc.pages for b in p.blocks if any(ln.words for ln in b.lines)})
    if kinds:  # block kinds as layout tags, referenced by each TextBlock's TAGREFS
        tags = ET.SubElement(alto, "Tags")
        for kind in kinds:
            ET.SubElement(tags, "LayoutTag", {"ID": f"kind_{kind}", "TYPE": "block", "LABEL": kind})
    layout = ET.SubElement(alto, "Layout")
    for number, page in enumerate(doc.pages, start=1):
        layout.append(_page(page, number))
    return serialize(alto)


def _description(doc: Document) -> ET.Element:
    desc = ET.Element("Description")
    ET.SubElement(desc, "MeasurementUnit").text = "pixel"
    source = doc.source or next((p.source for p in doc.pages if p.source), None)
    if source:
        info = ET.SubElement(desc, "sourceImageInformation")
        ET.SubElement(info, "fileName").text = xml_text(source)
    processing = ET.SubElement(desc, "Processing", {"ID": "processing_1"})
    ET.SubElement(processing, "processingCategory").text = "contentGeneration"
    software = ET.SubElement(processing, "processingSoftware")
    ET.SubElement(software, "softwareName").text = SOFTWARE
    ET.SubElement(software, "softwareVersion").text = VERSION
    return desc


def _page(page: Page, number: int) -> ET.Element:
    height, width = page.dimensions
    node = ET.Element("Page", {"ID": f"page_{number}", "PHYSICAL_IMG_NR": str(page.page_idx + 1)})
    node.attrib.update({"HEIGHT": str(height), "WIDTH": str(width)})
    space = ET.SubElement(
        node, "PrintSpace", {"HPOS": "0", "VPOS": "0", "WIDTH": str(width), "HEIGHT": str(height)}
    )
    for b, block in enumerate((blk for blk in page.blocks if any(ln.words for ln in blk.lines)), start=1):
        assert block.geometry is not None  # a block with words has a geometry
        ident = f"block_{number}_{b}"
        attrs = {"ID": ident, **_position(block.geometry, page), "TAGREFS": f"kind_{block.kind}"}
        text_block = ET.SubElement(space, "TextBlock", attrs)
        for n, line in enumerate((ln for ln in block.lines if ln.words), start=1):
            text_block.append(_line(line, page, f"line_{number}_{b}_{n}"))
    for r, region in enumerate(page.regions, start=1):
        kind = xml_text(region.kind)
        ET.SubElement(
            space,
            "Illustration",
            {"ID": f"region_{number}_{r}", **_position(region.geometry, page), "TYPE": kind},
        )
    return node


def _line(line: Line, page: Page, ident: str) -> ET.Element:
    assert line.geometry is not None  # a line with words has a geometry
    node = ET.Element("TextLine", {"ID": ident, **_position(line.geometry, page)})
    previous_right: int | None = None
    for n, word in enumerate(line.words, start=1):
        pos = _position(word.geometry, page)
        if previous_right is not None:
            gap = max(0, int(pos["HPOS"]) - previous_right)
            ET.SubElement(node, "SP", {"HPOS": str(previous_right), "VPOS": pos["VPOS"], "WIDTH": str(gap)})
        attrs = {"ID": f"{ident}_{n}".replace("line_", "string_", 1), **pos}
        attrs["WC"] = f"{unit_confidence(word.confidence):.4f}"
        attrs["CONTENT"] = xml_text(word.value)
        string = ET.SubElement(node, "String", attrs)
        points = word_points(word, page.dimensions)
        if points is not None:
            ET.SubElement(ET.SubElement(string, "Shape"), "Polygon", {"POINTS": points})
        previous_right = int(pos["HPOS"]) + int(pos["WIDTH"])
    return node


def _position(box: BBox, page: Page) -> dict[str, str]:
    x0, y0, x1, y1 = box_to_pixels(box, page.dimensions)
    return {"HPOS": str(x0), "VPOS": str(y0), "WIDTH": str(x1 - x0), "HEIGHT": str(y1 - y0)}
