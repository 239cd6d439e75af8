"""Graft an invisible text layer onto a page of an existing PDF (pikepdf), leaving its content as it is.

The page's own content streams and images are not rewritten: the layer is one new content stream
appended to the page's ``/Contents`` array, and one prepended ``q`` stream (with the matching ``Q`` at the
start of the layer) isolates the page's graphics state from the text. Each word is drawn in text render
mode 3 (invisible) with :mod:`vision.export._glyphless`, its font size set to the box height and its
horizontal scaling to the box width, along its rotated ``polygon`` when it has one.

Geometry: word boxes are relative to the page as displayed (crop box, turned by ``/Rotate``), which is how
:class:`vision.io.pdf.PdfFile` renders pages; one ``cm`` maps that frame onto the page's user space.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence

import pikepdf

from vision.export._glyphless import ADVANCE, DESCENT, add_glyphless_font, encode_text
from vision.structures.document import Page, Word

__all__ = [
    "display_frame", "graft_words", "page_rotation", "set_page_rotation", "skew_matrix", "text_only_pdf",
]

Matrix = tuple[float, float, float, float, float, float]
_MIN_ANGLE = 0.5  # degrees: below this a word polygon is drawn as its axis-aligned box


def _inherited(page: pikepdf.Page, key: str) -> pikepdf.Object | None:
    """A page attribute, looked up through the page tree as PDF inheritance says."""
    node: pikepdf.Object | None = page.obj
    while node is not None:
        if key in node:
            return node[key]
        node = node.get("/Parent")
    return None


def page_rotation(page: pikepdf.Page) -> int:
    """The page's ``/Rotate`` (inherited or its own), normalised to 0, 90, 180 or 270."""
    value = _inherited(page, "/Rotate")
    return int(value) % 360 // 90 * 90 if value is not None else 0


def set_page_rotation(page: pikepdf.Page, degrees: int) -> None:
    """Set the page's ``/Rotate`` (clockwise, a multiple of 90)."""
    page.obj.Rotate = int(degrees) % 360


def _crop_box(page: pikepdf.Page) -> tuple[float, float, float, float]:
    box = _inherited(page, "/CropBox") or _inherited(page, "/MediaBox")
    if box is None:
        raise ValueError("page has no /MediaBox")
    x0, y0, x1, y1 = (float(v) for v in box)
    return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)


def display_frame(page: pikepdf.Page, rotation: int | None = None) -> tuple[Matrix, float, float]:
    """The ``cm`` from display space (points, origin bottom-left of the page as shown, y up) to user space,
    and the displayed width and height in points.

    ``rotation`` replaces the page's ``/Rotate`` (the frame the word geometry was measured in).
    """
    x0, y0, x1, y1 = _crop_box(page)
    rotation = page_rotation(page) if rotation is None else rotation % 360
    corners = {  # displayed top-left, top-right and bottom-left corners in user space
        0: ((x0, y1), (x1, y1), (x0, y0)),
        90: ((x0, y0), (x0, y1), (x1, y0)),
        180: ((x1, y0), (x0, y0), (x1, y1)),
        270: ((x1, y1), (x1, y0), (x0, y1)),
    }
    (tlx, tly), (trx, try_), (blx, bly) = corners[rotation]
    width, height = math.hypot(trx - tlx, try_ - tly), math.hypot(blx - tlx, bly - tly)
    matrix = ((trx - tlx) / width, (try_ - tly) / width, (tlx - blx) / height, (tly - bly) / height, blx, bly)
    return matrix, width, height


def skew_matrix(page: pikepdf.Page, degrees: float) -> Matrix:
    """A ``cm`` turning the page content counter-clockwise (as displayed) by ``degrees`` about its centre."""
    x0, y0, x1, y1 = _crop_box(page)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return c, s, -s, c, cx - c * cx + s * cy, cy - s * cx - c * cy


def _num(value: float) -> str:
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _cm(matrix: Matrix) -> str:
    return " ".join(_num(v) for v in matrix) + " cm\n"


def _frame(
    word: Word, width: float, height: float
) -> tuple[tuple[float, float], tuple[float, float], float, float] | None:
    """``(top-left, baseline direction, width, height)`` of ``word`` in display points, ``None`` if empty."""

    def point(x: float, y: float) -> tuple[float, float]:  # relative (y down) -> display points (y up)
        return x * width, (1.0 - y) * height

    x0, y0, x1, y1 = word.geometry
    top_left, top_right, bottom_left = point(x0, y0), point(x1, y0), point(x0, y1)
    if word.polygon is not None:
        p0, p1, _, p3 = (point(x, y) for x, y in word.polygon)
        if abs(math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))) >= _MIN_ANGLE:
            top_left, top_right, bottom_left = p0, p1, p3
    box_w = math.hypot(top_right[0] - top_left[0], top_right[1] - top_left[1])
    box_h = math.hypot(bottom_left[0] - top_left[0], bottom_left[1] - top_left[1])
    if box_w <= 0 or box_h <= 0:
        return None
    direction = (top_right[0] - top_left[0]) / box_w, (top_right[1] - top_left[1]) / box_w
    return top_left, direction, box_w, box_h


def _line_ops(words: Sequence[Word], width: float, height: float, font: str) -> str:
    """Operators drawing a line's words invisibly over their boxes, each followed by a space glyph that
    spans the gap to the next word (so extractors see the word break, as in OCRmyPDF's layers)."""
    placed = [(t, f) for w in words if (t := " ".join(w.value.split())) and (f := _frame(w, width, height))]
    ops = []
    for k, (text, ((tx, ty), (dx, dy), box_w, box_h)) in enumerate(placed):
        ux, uy = -dy, dx  # "up" of the text, perpendicular to the baseline
        rise = (1 + DESCENT) * box_h  # from the top edge down to the baseline
        ox, oy = tx - rise * ux, ty - rise * uy
        scale = 100.0 * box_w / (len(text) * ADVANCE * box_h)
        code = encode_text(text).decode("ascii")
        ops.append(
            f"/{font} {_num(box_h)} Tf {_num(scale)} Tz "
            f"{_num(dx)} {_num(dy)} {_num(-dy)} {_num(dx)} {_num(ox)} {_num(oy)} Tm {code} Tj\n"
        )
        if k + 1 < len(placed):
            (nx, ny), _, _, _ = placed[k + 1][1]
            gap = (nx - tx - box_w * dx) * dx + (ny - ty - box_w * dy) * dy  # along the baseline
            space = max(gap, 0.05 * box_h)  # never zero: a space of no width can be dropped by extractors
            ops.append(
                f"{_num(100.0 * space / (ADVANCE * box_h))} Tz {encode_text(' ').decode('ascii')} Tj\n"
            )
    return "".join(ops)


def _layer_ops(
    lines: Iterable[Sequence[Word]], matrix: Matrix, width: float, height: float, font: str
) -> str:
    """The display frame's ``cm``, then the lines' words drawn invisibly (render mode 3); the caller wraps it
    in its own graphics state."""
    body = "".join(_line_ops(line, width, height, font) for line in lines)
    return _cm(matrix) + ("BT\n3 Tr\n" + body + "ET\n" if body else "")


def graft_words(
    pdf: pikepdf.Pdf,
    page: pikepdf.Page,
    lines: Iterable[Sequence[Word]],
    font: pikepdf.Object,
    *,
    rotation: int | None = None,
    content_matrix: Matrix | None = None,
) -> None:
    """Add an invisible text layer with ``lines`` of words to ``page``; its content streams stay as they are.

    Args:
        pdf: the document ``page`` belongs to.
        page: the page.
        lines: the words of each line, with geometry relative to the page as displayed with ``rotation``.
        font: the Type 0 font from :func:`vision.export._glyphless.add_glyphless_font`.
        rotation: the ``/Rotate`` the geometry was measured with (default: the page's).
        content_matrix: a ``cm`` applied to the page content and the layer alike (deskew).
    """
    if "/Resources" not in page.obj:  # copy inherited resources down before adding the font
        inherited = _inherited(page, "/Resources")
        page.obj.Resources = (
            pikepdf.Dictionary({k: v for k, v in inherited.items()}) if inherited else pikepdf.Dictionary()
        )
    name = str(page.add_resource(font, pikepdf.Name.Font, prefix="VisionOCR"))[1:]
    matrix, width, height = display_frame(page, rotation)
    before = "q\n" + (_cm(content_matrix) if content_matrix else "") + "q\n"
    after = "Q\n" + _layer_ops(lines, matrix, width, height, name) + "Q\n"
    page.contents_add(pdf.make_stream(before.encode("ascii")), prepend=True)
    page.contents_add(pdf.make_stream(after.encode("ascii")), prepend=False)


def text_only_pdf(page: Page, dpi: float) -> bytes:
    """A one-page PDF holding only ``page``'s invisible text layer, sized as its image at ``dpi``: what
    Tesseract's ``textonly_pdf`` gives OCRmyPDF's sandwich renderer, which lays it over the page it came
    from (one content stream, the font under Tesseract's resource name ``/f-0-0``, as that renderer reads)."""
    height, width = page.dimensions
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(width * 72.0 / dpi, height * 72.0 / dpi))
    target = pdf.pages[0]
    target.obj.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary({"/f-0-0": add_glyphless_font(pdf)}))
    matrix, frame_w, frame_h = display_frame(target, 0)
    lines = [line.words for block in page.blocks for line in block.lines if line.words]
    ops = "q\n" + _layer_ops(lines, matrix, frame_w, frame_h, "f-0-0") + "Q\n"
    target.obj.Contents = pdf.make_stream(ops.encode("ascii"))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()
