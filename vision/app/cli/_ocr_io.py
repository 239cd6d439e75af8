"""``vision ocr``'s inputs and outputs as OCRmyPDF and Tesseract users expect them.

* ``-`` reads the input from stdin and ``-o -`` writes the output to stdout (a single input; a PDF also
  goes to stdout without ``-o`` when stdout is not a terminal): ``vision ocr - -f pdf < in.pdf > out.pdf``.
* ``--pages 1-3,7`` (1-based, as OCRmyPDF) OCRs those PDF pages; a searchable PDF keeps the other pages
  as they are. ``--password`` opens encrypted PDFs (the output is not encrypted).
* Output names append the format's extension unless the name already has it
  (:func:`vision.export.formats.output_path`): ``scan.pdf`` -> ``scan.pdf`` with ``--format pdf``,
  ``scan.png`` -> ``scan.png.pdf``, ``scan.pdf`` -> ``scan.pdf.txt`` (so ``scan.png`` and ``scan.pdf`` in
  one folder never write the same file).
* ``--format pdf`` writes the text layer onto the original (:mod:`vision.export.searchable`): pages with a
  text layer are left as they are (``--pdf-text auto``, also ``--skip-text``), ``--redo-ocr`` first removes
  an earlier OCR layer (invisible text) and OCRs those pages again (visible text on them is kept and left
  out of the new layer), ``--force-ocr`` rasterises every page
  and OCRs it. ``--rotate-pages`` and ``--deskew`` turn the output pages; ``--output-type pdfa`` writes
  PDF/A-2b. With ``--rectify`` the PDF is made of the rectified page images (the geometry is theirs).
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from pathlib import Path
from typing import Any, BinaryIO

from vision.errors import LimitExceeded, VisionError
from vision.structures import Document

__all__ = [
    "STDIO",
    "PageSelectionError",
    "add_io_arguments",
    "open_pages",
    "parse_pages",
    "pdf_bytes",
    "pdf_text_mode",
    "read_input",
    "RedoPages",
    "without_ocr_layer",
]

STDIO = Path("-")


class PageSelectionError(VisionError):
    """``--pages`` names pages the document does not have."""


def parse_pages(text: str) -> list[int]:
    """argparse type for ``--pages``: ``"1-3,7"`` -> ``[0, 1, 2, 6]`` (1-based in, sorted 0-based out)."""
    pages: set[int] = set()
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not match:
            raise argparse.ArgumentTypeError(f"not a page list like 1-3,7: {text!r}")
        first, last = int(match[1]), int(match[2] or match[1])
        if first < 1 or last < first:
            raise argparse.ArgumentTypeError(f"pages count from 1, ranges go up: {part.strip()!r}")
        if last - first > 1_000_000:
            raise argparse.ArgumentTypeError(f"page range too long: {part.strip()!r}")
        pages.update(range(first - 1, last))
    return sorted(pages)


def add_io_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the PDF input and output options (see the module docstring)."""
    group = parser.add_argument_group("PDF input and output")
    group.add_argument(
        "--pages", type=parse_pages, default=None, metavar="LIST", help="PDF pages to OCR, e.g. 1-3,7"
    )
    group.add_argument("--password", default=None, help="password of an encrypted PDF")
    mode = group.add_mutually_exclusive_group()
    mode.add_argument(
        "--skip-text", action="store_true", help="leave pages with a text layer as they are (default)"
    )
    mode.add_argument("--redo-ocr", action="store_true", help="replace an earlier OCR layer (invisible text)")
    mode.add_argument("--force-ocr", action="store_true", help="rasterise every page and OCR it")
    group.add_argument(
        "--output-type", choices=("pdf", "pdfa"), default="pdf", help="pdf, or pdfa (PDF/A-2b)"
    )
    group.add_argument(
        "--rotate-pages", action="store_true", help="turn pages upright (implies --detect-orientation)"
    )
    group.add_argument(
        "--deskew", action="store_true", help="level skewed pages in the PDF (implies --rotated)"
    )


def pdf_text_mode(args: argparse.Namespace) -> str:
    """The pipeline's ``pdf_text`` for the options: ``--force-ocr`` reads every page with OCR."""
    return "ocr" if args.force_ocr else args.pdf_text


def read_input(source: Path | str, args: argparse.Namespace, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of ``source`` (``-``: ``stdin``; a URI: :func:`vision.io.remote.read_uri`), at most
    ``--max-bytes``."""
    from vision.app.cli._common import limits_from_args
    from vision.io.remote import is_uri, read_uri

    limit = limits_from_args(args).max_bytes
    if is_uri(source):
        return read_uri(str(source), limit)
    if source == STDIO:
        data = (stdin or sys.stdin.buffer).read(limit + 1)
    else:
        with open(source, "rb") as fh:
            data = fh.read(limit + 1)
    if len(data) > limit:
        raise LimitExceeded(str(source), f"over the limit of {limit} bytes (max_bytes)")
    return data


def without_ocr_layer(data: bytes, name: str, args: argparse.Namespace) -> tuple[bytes, frozenset[int]]:
    """``--redo-ocr``: a PDF without its invisible text (an earlier OCR layer; the output is decrypted) and
    the indices of the pages that had some; other inputs as they are, with no page."""
    from vision.io.sniff import sniff_format

    if not args.redo_ocr or sniff_format(data[:4096]) != "pdf":
        return data, frozenset()
    from vision.export.pdf_redo import strip_ocr_layer
    from vision.export.pdfa import save_options
    from vision.export.source_pdf import open_source_pdf

    with open_source_pdf(data, name, password=args.password) as pdf:
        pages = strip_ocr_layer(pdf)
        out = io.BytesIO()
        pdf.save(out, **save_options(False))
    return out.getvalue(), frozenset(pages)


class RedoPages:
    """A ``DocumentFile`` whose ``pages`` (their earlier OCR layer removed) are read by OCR even when they
    still show visible text; ``visible`` collects that text's boxes per page as the pages are read (the
    searchable PDF leaves those words out of the new layer)."""

    def __init__(self, doc: Any, pages: frozenset[int]) -> None:
        self.doc, self.pages = doc, pages
        self.visible: dict[int, tuple[tuple[float, float, float, float], ...]] = {}

    @property
    def source(self) -> str:
        return self.doc.source

    def __len__(self) -> int:
        return len(self.doc)

    def __iter__(self) -> Any:
        for page in self.doc:
            if page.index in self.pages:
                self.visible[page.index] = tuple(w.geometry for w in page.text_layer if w.value.strip())
                page.text_layer = []  # read by the models, not from the (visible) layer alone
            yield page

    def __enter__(self) -> RedoPages:
        self.doc.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self.doc.__exit__(*exc)


def open_pages(data: bytes, name: str, args: argparse.Namespace, redo: frozenset[int] = frozenset()) -> Any:
    """A ``DocumentFile`` over ``data`` with ``--dpi``, ``--pages``, ``--password`` and the input limits;
    with ``redo`` (``--redo-ocr``'s pages) a :class:`RedoPages` over it."""
    from vision.app.cli._common import limits_from_args
    from vision.io import DocumentFile
    from vision.io.sniff import sniff_format

    options: dict[str, Any] = {"dpi": args.dpi, "limits": limits_from_args(args)}
    if sniff_format(data[:4096]) == "pdf":
        options.update(pages=args.pages, password=args.password)
    stream = io.BytesIO(data)
    stream.name = name  # messages name the file
    if redo:
        options["password"] = None  # without_ocr_layer wrote it decrypted
    try:
        doc = DocumentFile.from_path(stream, **options)
    except ValueError as exc:  # a --pages entry past the end
        raise PageSelectionError(name, str(exc)) from None
    return RedoPages(doc, redo) if redo else doc


def pdf_bytes(
    data: bytes, doc: Document, args: argparse.Namespace, name: str, redo: dict | None = None
) -> bytes:
    """The searchable PDF of ``data`` for the options: on the original, or rasterised with ``--force-ocr``
    and ``--rectify`` (whose pages are the rectified images). ``redo``: ``--redo-ocr``'s pages and the
    boxes of their visible text (:attr:`RedoPages.visible`)."""
    from vision.export.searchable import SearchableOptions, searchable_pdf

    if args.force_ocr or args.rectify:  # rectified pages are new images: draw them
        return _rasterised(doc, args)
    options = SearchableOptions(
        skip_text=args.pdf_text != "ocr",
        rotate_pages=args.rotate_pages,
        deskew=args.deskew,
        pdfa=args.output_type == "pdfa",
        password=None if args.redo_ocr else args.password,  # --redo-ocr already removed the encryption
        image_dpi=args.dpi,
        redo_pages=redo or {},
    )
    return searchable_pdf(data, doc, options, name=name)


def _rasterised(doc: Document, args: argparse.Namespace) -> bytes:
    """Page images under a text layer (:func:`vision.export.pdf.save_pdf`), PDF/A when asked."""
    from vision.export.pdf import pdf_bytes as rasterised_pdf

    data = rasterised_pdf(doc, dpi=args.dpi)
    if args.output_type != "pdfa":
        return data
    import pikepdf

    from vision.export._xml import SOFTWARE, VERSION
    from vision.export.pdfa import make_pdfa, save_options

    with pikepdf.open(io.BytesIO(data)) as pdf:
        make_pdfa(pdf, creator=f"{SOFTWARE} {VERSION}")
        out = io.BytesIO()
        pdf.save(out, **save_options(True))
    return out.getvalue()
