"""hOCR export: XHTML whose ``title`` attributes carry pixel boxes and word confidences.

One ``ocr_page`` per page (``bbox 0 0 W H; ppageno N``), one ``ocr_carea`` holding one ``ocr_par`` per
block, then ``ocr_line`` and ``ocrx_word`` (``bbox ...; x_wconf 0-100``; a word with an outline or a rotated
quad also gets ``poly x0 y0 x1 y1 ...``, hOCR's polygonal bounds). Boxes use
:func:`vision.structures.geometry.box_to_pixels`. Empty lines and blocks are left out.
Spec: hOCR 1.2 (kba.github.io/hocr-spec/1.2).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from vision.export._xml import SOFTWARE, VERSION, serialize, unit_confidence, word_points, xml_text
from vision.structures.document import Block, Document, Line, Page
from vision.structures.geometry import BBox, box_to_pixels

__all__ = ["export_hocr"]

XHTML_NS = "http://www.w3.org/1999/xhtml"
_DOCTYPE = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
    '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n'
)
_CAPABILITIES = (
    "ocr_page ocr_carea ocr_header ocr_footer ocr_table ocr_image ocr_par ocr_line ocrx_word ocrp_wconf "
    "ocrp_poly"
)
#: hOCR float classes for the block kinds that have one; every block also carries ``data-kind``.
_AREA_CLASSES = {"page_header": "ocr_header", "page_footer": "ocr_footer", "table": "ocr_table"}


def export_hocr(doc: Document, *, title: str | None = None) -> str:
    """``doc`` as an hOCR XHTML document (UTF-8 text; every page in one file).

    Args:
        doc: the document; page ``dimensions`` turn relative boxes into pixels.
        title: the ``<title>``; defaults to ``doc.source`` or ``"vision OCR"``.

    Raises:
        ValueError: when ``doc`` has no pages (hOCR requires at least one ``ocr_page``).
    """
    if not doc.pages:
        raise ValueError("hOCR needs at least one page; the document has none")
    html = ET.Element("html", {"xmlns": XHTML_NS})
    head = ET.SubElement(html, "head")
    ET.SubElement(head, "title").text = xml_text(title or doc.source or "vision OCR")
    ET.SubElement(head, "meta", {"http-equiv": "Content-Type", "content": "text/html; charset=utf-8"})
    ET.SubElement(head, "meta", {"name": "ocr-system", "content": f"{SOFTWARE} {VERSION}"})
    ET.SubElement(head, "meta", {"name": "ocr-capabilities", "content": _CAPABILITIES})
    ET.SubElement(head, "meta", {"name": "ocr-number-of-pages", "content": str(len(doc.pages))})
    ET.SubElement(head, "meta", {"name": "ocr-langs", "content": "und"})  # BCP 47 "undetermined"
    body = ET.SubElement(html, "body")
    for number, page in enumerate(doc.pages, start=1):
        body.append(_page(page, number))
    return serialize(html, _DOCTYPE)


def _page(page: Page, number: int) -> ET.Element:
    height, width = page.dimensions
    props = [f"bbox 0 0 {width} {height}", f"ppageno {page.page_idx}"]
    if page.source:
        props.insert(0, f"image {_quoted(page.source)}")
    div = ET.Element("div", {"class": "ocr_page", "id": f"page_{number}", "title": "; ".join(props)})
    kept = (blk for blk in page.blocks if _has_words(blk) or (blk.kind == "figure" and blk.geometry is not None))
    for b, block in enumerate(kept, start=1):
        if _has_words(block):
            div.append(_block(block, page, f"{number}_{b}"))
        else:  # a figure: an image float, in reading order
            attrs = {"class": "ocr_image", "id": f"block_{number}_{b}", "title": _bbox(block.geometry, page)}
            ET.SubElement(div, "div", {**attrs, "data-kind": "figure"})
    return div


def _block(block: Block, page: Page, ident: str) -> ET.Element:
    box = _bbox(block.geometry, page)
    area_class = _AREA_CLASSES.get(block.kind, "ocr_carea")
    area = ET.Element("div", {"class": area_class, "id": f"block_{ident}", "title": box, "data-kind": block.kind})
    par = ET.SubElement(area, "p", {"class": "ocr_par", "id": f"par_{ident}", "title": box})
    for n, line in enumerate((ln for ln in block.lines if ln.words), start=1):
        par.append(_line(line, page, f"{ident}_{n}"))
    return area


def _line(line: Line, page: Page, ident: str) -> ET.Element:
    span = ET.Element(
        "span", {"class": "ocr_line", "id": f"line_{ident}", "title": _bbox(line.geometry, page)}
    )
    for n, word in enumerate(line.words, start=1):
        wconf = round(100 * unit_confidence(word.confidence))
        title = f"{_bbox(word.geometry, page)}; x_wconf {wconf}"
        points = word_points(word, page.dimensions)
        if points is not None:
            title += f"; poly {points}"
        ET.SubElement(
            span, "span", {"class": "ocrx_word", "id": f"word_{ident}_{n}", "title": title}
        ).text = xml_text(word.value)
    return span


def _bbox(box: BBox | None, page: Page) -> str:
    assert box is not None  # blocks and lines with words always have a geometry
    x0, y0, x1, y1 = box_to_pixels(box, page.dimensions)
    return f"bbox {x0} {y0} {x1} {y1}"


def _has_words(block: Block) -> bool:
    return any(line.words for line in block.lines)


def _quoted(text: str) -> str:
    """An hOCR property string: double-quoted, with backslashes and quotes escaped."""
    escaped = xml_text(text).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
