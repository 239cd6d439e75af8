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

``--jobs N`` reads N files at once, each lane with its own predictor and 1/N of the threads: small models
use two cores better as two single-thread lanes than as one two-thread one (1.3-1.4x pages/s for 20 FUNSD
pages on our 2-core CPU). Stdout keeps the inputs' order.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
from concurrent.futures import Future, ThreadPoolExecutor
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
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="files read at once, each by its own predictor with 1/N of the threads (default 1)",
    )
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


def _process(job: Job, lanes: queue.SimpleQueue, args: argparse.Namespace) -> tuple[int, str | None]:
    """OCR one input with an idle predictor of ``lanes`` and write its output file; returns its page count
    and, for stdout, its text (written by the caller, in input order)."""
    from vision.io import DocumentFile

    predictor = lanes.get()
    try:
        with DocumentFile.from_path(job.source, dpi=args.dpi, limits=limits_from_args(args)) as pages:
            doc = predictor(pages)
    finally:
        lanes.put(predictor)
    for page in doc.pages:  # e.g. text in a script no shipped recognizer reads
        for warning in page.warnings:
            print(f"warning: {job.source} page {page.page_idx + 1}: {warning}", file=sys.stderr)
    if job.output is None:
        return len(doc.pages), render(doc, args.format)
    if args.format == "pdf":
        job.output.parent.mkdir(parents=True, exist_ok=True)
        doc.save_pdf(job.output, dpi=args.dpi)
    else:
        write_atomically(job.output, render(doc, args.format))
    return len(doc.pages), None


def build_lanes(args: argparse.Namespace, jobs: int) -> list[Callable[[Any], Document]]:
    """``jobs`` predictors, each built with ``1/jobs`` of torch's threads (onnxruntime sessions take their
    thread count at build time); torch keeps that share while the lanes run (the caller restores it)."""
    import torch

    torch.set_num_threads(max(1, torch.get_num_threads() // jobs))
    return [build_predictor(args) for _ in range(jobs)]


def run(args: argparse.Namespace, predictor: Callable[[Any], Document] | None = None) -> int:
    """OCR every input; returns 1 when any failed, 2 on a bad request, else 0.

    ``predictor`` replaces the one the options describe (an embedding application's own).
    """
    found, problems = collect_inputs(args.inputs, args.recursive)
    try:
        from vision.models.recognition.languages import parse_lang

        parse_lang(getattr(args, "lang", None))
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
    if args.jobs < 1:
        print("error: --jobs must be at least 1", file=sys.stderr)
        return 2
    import torch

    threads = torch.get_num_threads()
    n = 1 if predictor is not None else min(args.jobs, len(jobs))  # an embedding application's predictor: alone
    lanes: queue.SimpleQueue = queue.SimpleQueue()
    try:
        for p in [predictor] if predictor is not None else build_lanes(args, n):
            lanes.put(p)
    except BaseException:
        torch.set_num_threads(threads)
        raise
    failed = len(problems)
    bar = tqdm(total=len(jobs), unit="file", desc="ocr", file=sys.stderr, disable=args.no_progress or None)
    pages = 0
    pool = ThreadPoolExecutor(n, thread_name_prefix="ocr")
    try:
        futures: list[Future] = [pool.submit(_process, job, lanes, args) for job in jobs]
        for job, future in zip(jobs, futures):  # in input order: stdout keeps it
            try:
                count, text = future.result()
                pages += count
                if text is not None:
                    sys.stdout.write((f"==> {job.source} <==\n" if len(jobs) > 1 else "") + text)
                    sys.stdout.flush()
            except (VisionError, OSError) as exc:
                failed += 1
                reason = str(exc) if isinstance(exc, VisionError) else f"{job.source}: {exc}"
                bar.write(f"error: {reason}", file=sys.stderr)
            bar.set_postfix(pages=pages, failed=failed, refresh=False)
            bar.update(1)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
        torch.set_num_threads(threads)
    return 1 if failed else 0
