"""``vision ocr INPUT... [-o OUT] [--format txt|json|hocr|alto|pdf] [--recursive]``: OCR images and PDFs.

Files named on the command line are read whatever their extension (their bytes decide the format);
folders contribute files with an image or PDF extension (:data:`DOCUMENT_SUFFIXES`), and their subfolders
with ``--recursive``. Outputs:

* without ``-o``: text formats go to stdout (txt for any number of inputs, with a ``==> name <==`` header
  when there are several; json/hocr/alto for one input); pdf needs ``-o``;
* ``-o FILE`` with one input file: that file;
* ``-o DIR`` (an existing folder, a name ending in ``/``, or several inputs): ``DIR/<name relative to the
  folder given>.<format>`` (``scan.pdf`` -> ``scan.pdf.txt``).

Every output is written atomically (a temporary sibling, then ``os.replace``). A file that cannot be read
is reported on stderr and skipped; the exit code is 1 when any input failed, else 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tqdm import tqdm

from vision.app.cli._common import (
    add_limit_arguments,
    add_ocr_model_arguments,
    limits_from_args,
    ocr_predictor_from_args,
    scan_inputs,
)
from vision.errors import VisionError
from vision.export._atomic import write_atomically as replace_file
from vision.structures import Document

__all__ = ["register", "run", "collect_inputs", "render", "write_atomically", "DOCUMENT_SUFFIXES", "FORMATS"]

FORMATS = ("txt", "json", "hocr", "alto", "pdf")
DOCUMENT_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".jpe", ".tif", ".tiff", ".bmp", ".gif", ".webp", ".pdf"}
)
_EXTENSIONS = {"txt": "txt", "json": "json", "hocr": "hocr", "alto": "xml", "pdf": "pdf"}


@dataclass(frozen=True)
class Job:
    """One input file and where its output goes (``None``: stdout)."""

    source: Path
    output: Path | None


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ocr",
        help="read the text of images and PDFs (txt, json, hOCR, ALTO or searchable PDF)",
        description="Files are read whatever their extension; folders contribute images and PDFs (subfolders "
        "too with --recursive). Without -o text goes to stdout. Unreadable files are reported and "
        "skipped; exit code 1 when any input failed.",
    )
    parser.add_argument(
        "inputs", nargs="+", metavar="INPUT", type=Path, help="image or PDF files and folders"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        metavar="OUT",
        help="output file (one input) or folder (several inputs, or a path ending in /)",
    )
    parser.add_argument("-f", "--format", choices=FORMATS, default="txt", help="output format (default txt)")
    parser.add_argument("-r", "--recursive", action="store_true", help="also read the subfolders of folders")
    parser.add_argument(
        "--dpi",
        type=float,
        default=150.0,
        help="PDF rendering resolution, and pixels per inch of images in --format pdf (150)",
    )
    parser.add_argument(
        "--pdf-text",
        choices=("auto", "ocr", "layer"),
        default="auto",
        help="use a PDF page's own text layer when it has one (auto), never (ocr) or only (layer)",
    )
    parser.add_argument(
        "--detect-orientation", action="store_true", help="turn pages rotated by 90/180/270 upright"
    )
    parser.add_argument(
        "--rotated",
        action="store_true",
        help="skewed pages and rotated lines: detect rotated boxes (assume_straight_pages=False)",
    )
    add_ocr_model_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_limit_arguments(parser)
    parser.set_defaults(func=run)


def build_predictor(args: argparse.Namespace) -> Callable[[Any], Document]:
    """The OCR predictor the options describe (built once for all inputs)."""
    return ocr_predictor_from_args(
        args,
        assume_straight_pages=not args.rotated,
        detect_orientation=args.detect_orientation,
        pdf_text=args.pdf_text,
    )


def collect_inputs(inputs: list[Path], recursive: bool) -> tuple[list[tuple[Path, Path]], list[str]]:
    """``(file, name relative to the folder given)`` pairs, and messages for inputs that do not exist."""
    return scan_inputs(inputs, DOCUMENT_SUFFIXES, recursive)


def plan_outputs(args: argparse.Namespace, found: list[tuple[Path, Path]]) -> list[Job]:
    """Where each input's output goes (see the module docstring); raises ``ValueError`` on a bad request."""
    out, fmt = args.output, args.format
    if out is None:
        if fmt == "pdf":
            raise ValueError("--format pdf needs -o OUT")
        if fmt != "txt" and len(found) > 1:
            raise ValueError(f"--format {fmt} for several inputs needs -o DIR")
        return [Job(src, None) for src, _ in found]
    single_file = len(args.inputs) == 1 and args.inputs[0].is_file()
    as_dir = out.is_dir() or str(args.output).endswith(os.sep) or not single_file
    if not as_dir:
        return [Job(found[0][0], out)] if found else []
    jobs = [Job(src, out / f"{rel}.{_EXTENSIONS[fmt]}") for src, rel in found]
    targets = [j.output for j in jobs]
    if len(set(targets)) != len(targets):
        raise ValueError("two inputs would write the same output file; give them separate -o folders")
    return jobs


def render(doc: Document, fmt: str) -> str:
    """The text of a text output format."""
    if fmt == "txt":
        return doc.render() + "\n"
    if fmt == "json":
        return doc.to_json(indent=1) + "\n"
    if fmt == "hocr":
        return doc.export_hocr()
    if fmt == "alto":
        return doc.export_alto()
    raise ValueError(f"{fmt!r} is not a text format")


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (making its folder) through a temporary sibling renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, text)


def _process(job: Job, predictor: Callable[[Any], Document], args: argparse.Namespace, header: bool) -> int:
    """OCR one input and write its output; returns its page count."""
    from vision.io import DocumentFile

    with DocumentFile.from_path(job.source, dpi=args.dpi, limits=limits_from_args(args)) as pages:
        doc = predictor(pages)
    if job.output is None:
        prefix = f"==> {job.source} <==\n" if header else ""
        sys.stdout.write(prefix + render(doc, args.format))
        sys.stdout.flush()
    elif args.format == "pdf":
        job.output.parent.mkdir(parents=True, exist_ok=True)
        doc.save_pdf(job.output, dpi=args.dpi)
    else:
        write_atomically(job.output, render(doc, args.format))
    return len(doc.pages)


def run(args: argparse.Namespace, predictor: Callable[[Any], Document] | None = None) -> int:
    """OCR every input; returns 1 when any failed, 2 on a bad request, else 0.

    ``predictor`` replaces the one the options describe (an embedding application's own).
    """
    found, problems = collect_inputs(args.inputs, args.recursive)
    try:
        jobs = plan_outputs(args, found)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for message in problems:
        print(f"error: {message}", file=sys.stderr)
    if not jobs:
        if not problems:
            print("error: no image or PDF files found in the inputs", file=sys.stderr)
        return 1
    predictor = predictor or build_predictor(args)
    failed = len(problems)
    bar = tqdm(total=len(jobs), unit="file", desc="ocr", file=sys.stderr, disable=args.no_progress or None)
    pages = 0
    try:
        for job in jobs:
            try:
                pages += _process(job, predictor, args, header=len(jobs) > 1)
            except (VisionError, OSError) as exc:
                failed += 1
                reason = str(exc) if isinstance(exc, VisionError) else f"{job.source}: {exc}"
                bar.write(f"error: {reason}", file=sys.stderr)
            bar.set_postfix(pages=pages, failed=failed, refresh=False)
            bar.update(1)
    finally:
        bar.close()
    return 1 if failed else 0
