"""PDFs made at test time: scans (one page image, PNG or JPEG, RGB or grey, any /Rotate, a crop box) and
born-digital pages (fpdf2 text), each with the ground-truth words relative to the page as displayed."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import img2pdf
import numpy as np
import pikepdf
from PIL import Image

sys.path.insert(0, str(Path(__file__).parents[1] / "pipelines"))
from _ocr_stages import TEXT, render_page  # noqa: E402

from vision.structures import Block, Document, Line, Page, Word  # noqa: E402

# (encoding, mode, /Rotate, crop inset in points or None)
SCANS = [
    ("png", "RGB", 0, None),
    ("png", "L", 0, None),
    ("jpeg", "RGB", 0, None),
    ("jpeg", "L", 90, None),
    ("png", "RGB", 180, None),
    ("png", "L", 270, None),
    ("jpeg", "RGB", 0, (12.0, 8.0)),
    ("png", "RGB", 90, (6.0, 10.0)),
    ("jpeg", "L", 180, (4.0, 4.0)),
    ("png", "L", 0, (20.0, 16.0)),
]


def _rotate_point(u: float, v: float, rotation: int) -> tuple[float, float]:
    """A relative point of the unrotated page on the page shown turned clockwise by ``rotation``."""
    return {0: (u, v), 90: (1 - v, u), 180: (1 - u, 1 - v), 270: (v, 1 - u)}[rotation]


def scan_pdf(index: int, shift: int = 0) -> tuple[bytes, list[tuple[str, tuple[float, float, float, float]]]]:
    """Scan number ``index`` of :data:`SCANS`: its bytes and ``(word, box)`` pairs on the displayed page."""
    encoding, mode, rotation, inset = SCANS[index]
    image, words = render_page(TEXT[shift:] + TEXT[:shift], size=(400, 700))
    h, w = image.shape[:2]
    buf = io.BytesIO()
    Image.fromarray(image).convert(mode).save(buf, format=encoding.upper(), dpi=(120, 120), quality=85)
    pdf = pikepdf.open(io.BytesIO(img2pdf.convert(buf.getvalue())))
    page = pdf.pages[0]
    width_pt, height_pt = w * 72 / 120, h * 72 / 120
    crop = (0.0, 0.0, width_pt, height_pt)
    if inset is not None:
        crop = (inset[0], inset[1], width_pt - inset[0] / 2, height_pt - inset[1] / 2)
        page.obj.CropBox = list(crop)
    if rotation:
        page.obj.Rotate = rotation
    truth = []
    for text, quad in words:
        xs = (quad[:, 0] * 72 / 120 - crop[0]) / (crop[2] - crop[0])
        ys = (height_pt - quad[:, 1] * 72 / 120 - crop[1]) / (crop[3] - crop[1])  # up from the crop bottom
        corners = [_rotate_point(u, 1 - v, rotation) for u, v in zip(xs, ys)]
        us, vs = [c[0] for c in corners], [c[1] for c in corners]
        truth.append((text, (min(us), min(vs), max(us), max(vs))))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue(), truth


def born_digital_pdf(index: int) -> bytes:
    """A page of vector text (fpdf2, core font): a different line of :data:`TEXT` per ``index``."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(420 + 10 * index, 300))
    pdf.add_page()
    pdf.set_font("helvetica", size=12 + index)
    for k in range(len(TEXT)):
        pdf.text(30, 60 + 30 * k, TEXT[(k + index) % len(TEXT)])
    pdf.set_draw_color(200, 0, 0)
    pdf.line(20, 20, 380, 20)  # vector graphics too
    return bytes(pdf.output())


def truth_document(truth: list[tuple[str, tuple[float, float, float, float]]], page_idx: int = 0) -> Document:
    """A one-page document holding the ground-truth words, one per line (geometry only matters)."""
    words = [Word(text, 0.9, box) for text, box in truth]
    return Document(pages=[Page(page_idx, (400, 700), blocks=[Block([Line([w]) for w in words])])])


def extracted_boxes(
    data: bytes, page_index: int, truth: list[tuple[str, tuple[float, float, float, float]]]
) -> list[tuple[float, float, float, float]]:
    """Page-relative boxes of the words of ``truth`` as pdfium extracts them: each character goes to the
    ``truth`` box holding its centre (else the closest); each word must get exactly its own letters, and its box is the union
    of their boxes (pdfium orders characters its own way on turned pages, so order is not compared)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    from vision.io.pdf_text import _to_page_box

    document = pdfium.PdfDocument(data)
    page = document[page_index]
    textpage = page.get_textpage()
    truth_boxes = np.array([box for _, box in truth])
    letters: list[list[str]] = [[] for _ in truth]
    boxes: list[list[tuple[float, ...]]] = [[] for _ in truth]
    for i in range(textpage.count_chars()):
        char = chr(raw.FPDFText_GetUnicode(textpage, i))
        if char.isspace() or raw.FPDFText_IsGenerated(textpage, i) == 1:
            continue
        box = _to_page_box(raw, page, tuple(textpage.get_charbox(i, loose=True)))
        centre = np.array(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
        outside = np.maximum(truth_boxes[:, :2] - centre, 0) + np.maximum(centre - truth_boxes[:, 2:], 0)
        nearest = int(np.argmin((outside**2).sum(axis=1)))  # the box holding the centre, else the closest
        letters[nearest].append(char)
        boxes[nearest].append(box)
    textpage.close()
    page.close()
    document.close()
    result = []
    for (word, _), got, found in zip(truth, letters, boxes):
        assert sorted(got) == sorted(word), (word, "".join(got))
        arr = np.array(found)
        result.append((arr[:, 0].min(), arr[:, 1].min(), arr[:, 2].max(), arr[:, 3].max()))
    return result


def image_streams(data: bytes) -> list[bytes]:
    """Raw (still encoded) bytes of every image XObject, page by page."""
    with pikepdf.open(io.BytesIO(data)) as pdf:
        return [
            bytes(xobject.read_raw_bytes()) for page in pdf.pages for xobject in page.get_images().values()
        ]


def content_bytes(data: bytes) -> list[bytes]:
    """Each page's content streams, raw, joined (what a page draws, as stored)."""
    with pikepdf.open(io.BytesIO(data)) as pdf:
        result = []
        for page in pdf.pages:
            contents = page.obj.Contents
            streams = contents if isinstance(contents, pikepdf.Array) else [contents]
            result.append(b"\n".join(bytes(s.read_raw_bytes()) for s in streams))
        return result
