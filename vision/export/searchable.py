"""Searchable PDF on the original: the input PDF (or image) with an invisible text layer, as OCRmyPDF does.

Unlike :func:`vision.export.pdf.save_pdf`, which draws the rendered page images (``--force-ocr``), pages
keep their content streams, images and fonts byte for byte (see :mod:`vision.export.pdf_layer`); image
inputs are embedded losslessly at their own resolution (:mod:`vision.export.source_pdf`). Per page:

* a page that shows text (born-digital, or OCR'd before: :func:`~vision.export.pdf_redo.page_has_text`)
  is left unchanged when ``skip_text`` is on (``--pdf-text auto``, the default), except the ``redo_pages``
  of ``--redo-ocr`` (their earlier OCR layer removed), whose new layer leaves out the words over the visible
  text they keep;
* a page that was OCR'd gets the words of its :class:`~vision.structures.Page`, mapped onto the page as
  displayed (crop box and ``/Rotate``); pages of the input that were not OCR'd (``--pages``) are copied;
* ``rotate_pages`` turns the page by the orientation the OCR found (its ``/Rotate``), ``deskew`` turns its
  content and its text by the skew of the words' polygons (needs rotated boxes, ``--rotated``).

``pdfa`` makes the result PDF/A-2b (:mod:`vision.export.pdfa`). The output is never encrypted.
"""

from __future__ import annotations

import io
import math
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pikepdf

from vision._atomic import write_atomically
from vision.export._glyphless import add_glyphless_font
from vision.export._xml import SOFTWARE, VERSION
from vision.export.pdf_layer import graft_words, page_rotation, set_page_rotation, skew_matrix
from vision.export.pdf_redo import page_has_text
from vision.export.pdfa import make_pdfa, save_options
from vision.export.source_pdf import open_source_pdf
from vision.structures.document import Document, Page, Word
from vision.structures.geometry import BBox

__all__ = ["SearchableOptions", "searchable_pdf", "skew_angle", "write_searchable_pdf"]

_MIN_SKEW = 0.1  # degrees: a smaller measured skew leaves the page as it is


@dataclass(frozen=True)
class SearchableOptions:
    """How the searchable PDF is made.

    Attributes:
        skip_text: leave pages that had a text layer as they are (no OCR layer added).
        rotate_pages: set each page's ``/Rotate`` so the orientation the OCR found reads upright.
        deskew: turn each page's content by the skew of its words.
        pdfa: write PDF/A-2b.
        password: opens an encrypted input (the output is not encrypted).
        image_dpi: resolution of image inputs that declare none.
        redo_pages: pages OCR'd again after their earlier OCR layer was removed (``--redo-ocr``,
            :func:`~vision.export.pdf_redo.strip_ocr_layer`), each with the relative boxes of the visible text
            it still shows: they get a layer even though they show text, without the words over that text.
    """

    skip_text: bool = True
    rotate_pages: bool = False
    deskew: bool = False
    pdfa: bool = False
    password: str | None = None
    image_dpi: float = 150.0
    redo_pages: Mapping[int, Sequence[BBox]] = field(default_factory=dict)


def skew_angle(page: Page) -> float:
    """Median angle in degrees of the words' top edges in page pixels (positive: descending to the right)."""
    height, width = page.dimensions
    angles = [
        math.degrees(math.atan2((p1[1] - p0[1]) * height, (p1[0] - p0[0]) * width))
        for word in page.words
        if word.polygon is not None
        for p0, p1 in [word.polygon[:2]]
    ]
    return statistics.median(angles) if angles else 0.0


def _outside(lines: list[list[Word]], boxes: Sequence[BBox], cover: float = 0.5) -> list[list[Word]]:
    """``lines`` without the words whose box lies ``cover`` or more under ``boxes`` (the page's visible text:
    it is searchable already)."""

    def covered(word: Word) -> bool:
        x0, y0, x1, y1 = word.geometry
        area = max((x1 - x0) * (y1 - y0), 1e-12)
        inside = sum(
            max(0.0, min(x1, b[2]) - max(x0, b[0])) * max(0.0, min(y1, b[3]) - max(y0, b[1])) for b in boxes
        )
        return inside >= cover * area

    kept = [[word for word in line if not covered(word)] for line in lines]
    return [line for line in kept if line]


def _apply(pdf: pikepdf.Pdf, doc: Document, options: SearchableOptions) -> None:
    font = None
    for page in doc.pages:
        if not 0 <= page.page_idx < len(pdf.pages):
            continue
        target = pdf.pages[page.page_idx]
        visible = options.redo_pages.get(page.page_idx)
        if options.skip_text and visible is None and page_has_text(target):
            continue
        angle = skew_angle(page) if options.deskew else 0.0
        font = font if font is not None else add_glyphless_font(pdf)
        rotation = page_rotation(target)
        matrix = skew_matrix(target, angle) if abs(angle) >= _MIN_SKEW else None
        lines = [line.words for block in page.blocks for line in block.lines]
        if visible:
            lines = _outside(lines, visible)
        graft_words(pdf, target, lines, font, content_matrix=matrix)
        if options.rotate_pages and page.orientation:
            set_page_rotation(target, rotation + page.orientation)


def searchable_pdf(data: bytes, doc: Document, options: SearchableOptions, *, name: str = "<input>") -> bytes:
    """The searchable PDF of ``data`` (the PDF or image that ``doc`` was read from) as bytes.

    Raises:
        vision.errors.PasswordRequired, vision.errors.CorruptFile: the input cannot be opened.
        vision.export.pdfa.PdfaError: ``pdfa`` asked for a document that cannot become PDF/A as it is.
    """
    with open_source_pdf(data, name, password=options.password, default_dpi=options.image_dpi) as pdf:
        _apply(pdf, doc, options)
        creator = f"{SOFTWARE} {VERSION}"
        if options.pdfa:
            make_pdfa(pdf, creator=creator)
        elif "/Info" not in pdf.trailer or "/Producer" not in pdf.docinfo:
            pdf.docinfo.Producer = creator
        out = io.BytesIO()
        pdf.save(out, **save_options(options.pdfa))
    return out.getvalue()


def write_searchable_pdf(
    data: bytes,
    doc: Document,
    path: str | os.PathLike[str],
    options: SearchableOptions,
    *,
    name: str = "<input>",
) -> None:
    """Write :func:`searchable_pdf` atomically to ``path``."""
    write_atomically(path, searchable_pdf(data, doc, options, name=name))
