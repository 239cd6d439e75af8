"""``vision ocr INPUT... [-o OUT] [--format txt|json|hocr|alto|md|html|pdf|tsv] [--recursive]``: OCR images
and PDFs.

Files named on the command line are read whatever their extension (their bytes decide the format);
folders contribute files with an image or PDF extension (:data:`DOCUMENT_SUFFIXES`), and their subfolders
with ``--recursive``. URIs (``s3://bucket/scans/``, ``file:///data/a.pdf``) name files and folders of object
stores and other filesystems alike (:mod:`vision.io.remote`); ``--files-from LIST`` adds the inputs LIST
names, one per line (:mod:`vision.app.cli._ocr_inputs`). Outputs:

* without ``-o``: text formats go to stdout (txt for any number of inputs, with a ``==> name <==`` header
  when there are several; json/hocr/alto/md/html/tsv for one input); pdf needs ``-o``, unless the input is
  ``-``;
* ``-`` as the input reads stdin, ``-o -`` writes stdout (see :mod:`vision.app.cli._ocr_io`);
* ``-o FILE`` with one input file: that file;
* ``-o DIR`` (an existing folder, a name ending in ``/``, or several inputs): ``DIR/<name relative to the
  folder given>`` plus the format's extension from :mod:`vision.export.formats` (``scan.pdf`` ->
  ``scan.pdf.txt``, ``scan.pdf.alto.xml``; a name that already ends with the extension keeps it:
  ``scan.pdf`` -> ``scan.pdf`` with ``--format pdf``). An output never overwrites its input.

Every output is written atomically (a temporary sibling, then ``os.replace``), so ``--resume`` can skip
inputs whose output exists. A file that cannot be read (damaged, or over a limit: a PDF that takes longer
than ``--pdf-timeout`` to render is stopped in its worker process) is reported on stderr and skipped; the
exit code is 1 when any input failed, else 0.

File inputs go through the bulk engine (:mod:`vision.app.cli._ocr_bulk`, :mod:`vision.pipelines.ocr.bulk`):
one predictor runs the models on pages of several files at once. On a GPU, ``--jobs N`` worker processes
read files (decode, render PDFs) and finish them (layout, the format's writer, the atomic write) for it
(default: one per spare core, up to 8). On the CPU the models take the cores: by default (``--jobs 0``)
everything runs in this process, reading in a thread (``--jobs 1``: one worker process reads and finishes);
``--jobs N`` with N >= 2 reads N files at once in this process, each lane with its own predictor and 1/N of
the threads (small models use two cores better as two single-thread lanes than as one two-thread one).
``--engine ray``, ``--devices cuda:0,cuda:1`` and ``--replicas N`` spread the files over Ray actors or
processes with a predictor each (:mod:`vision.app.cli._ocr_engines`). ``--redo-ocr`` and stdin use the
lanes of this process. Stdout keeps the inputs' order.
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

from vision._atomic import write_atomically as replace_file
from vision.app.cli._common import (
    add_limit_arguments,
    add_ocr_model_arguments,
    ocr_predictor_from_args,
    scan_inputs,
)
from vision.app.cli._ocr_bulk import cpu_lanes, default_jobs, is_file_job, run_bulk, write_stdout
from vision.app.cli._ocr_engines import add_engine_arguments
from vision.app.cli._ocr_inputs import input_name, listed_inputs
from vision.app.cli._ocr_io import (
    STDIO,
    add_io_arguments,
    open_pages,
    pdf_bytes,
    pdf_text_mode,
    read_input,
    without_ocr_layer,
)
from vision.errors import VisionError
from vision.export.formats import DOCUMENT_FORMATS, get_format, output_path
from vision.export.formats import render as render_format
from vision.io.remote import is_uri
from vision.structures import Document

__all__ = ["register", "run", "collect_inputs", "text_output", "write_atomically", "DOCUMENT_SUFFIXES", "FORMATS"]

FORMATS = DOCUMENT_FORMATS
DOCUMENT_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".jpe", ".tif", ".tiff", ".bmp", ".gif", ".webp", ".pdf"}
)


@dataclass(frozen=True)
class Job:
    """One input file and where its output goes (``None``: stdout)."""

    source: Path | str  # a str is a URI (:mod:`vision.io.remote`)
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
        "inputs", nargs="*", metavar="INPUT", type=input_name,
        help="image or PDF files and folders (-: stdin), or URIs of them (s3://bucket/scans/, file:///data/)",
    )
    parser.add_argument(
        "--files-from", default=None, metavar="LIST",
        help="also read the inputs named in LIST, one path or URI per line (# comments; -: stdin)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=str,  # a str keeps a trailing "/" (a folder), which Path would drop
        default=None,
        metavar="OUT",
        help="output file (one input; -: stdout) or folder (several inputs, or a path ending in /)",
    )
    parser.add_argument("-f", "--format", choices=FORMATS, default="txt", help="output format (default txt)")
    parser.add_argument("-r", "--recursive", action="store_true", help="also read the subfolders of folders")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="skip inputs whose output file already exists (outputs are written atomically)",
    )
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
        "--rectify",
        action="store_true",
        help="photos of documents: find the page and flatten it first (outputs describe the rectified page)",
    )
    parser.add_argument(
        "--rotated",
        action="store_true",
        help="skewed pages and rotated lines: detect rotated boxes (assume_straight_pages=False)",
    )
    parser.add_argument(
        "--outlines",
        action="store_true",
        help="give each word its detected region as a polygon of up to 32 points (the JSON format's "
        "'outline'): it follows text on a curved baseline",
    )
    add_ocr_model_arguments(parser)
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="GPU: worker processes that read files and write outputs for the predictor (default: one per "
        "spare core, up to 8); CPU: N files at once, each by its own predictor with 1/N of the threads",
    )
    add_engine_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_io_arguments(parser)
    add_limit_arguments(parser)
    parser.set_defaults(func=run)


def build_predictor(args: argparse.Namespace) -> Callable[[Any], Document]:
    """The OCR predictor the options describe (built once for all inputs)."""
    from vision.pipelines.ocr.options import orientation_changes

    return ocr_predictor_from_args(
        args,
        **orientation_changes(
            detect_orientation=args.detect_orientation or args.rotate_pages, rotated=args.rotated or args.deskew,
            outlines=getattr(args, "outlines", False) or None,
        ),
        pdf_text=pdf_text_mode(args),
        rectify=args.rectify,
    )


def collect_inputs(
    inputs: list[Path | str], recursive: bool
) -> tuple[list[tuple[Path | str, Path]], list[str]]:
    """``(file, name relative to the folder given)`` pairs, and messages for inputs that do not exist."""
    if inputs == [STDIO]:
        return [(STDIO, Path("stdin"))], []
    return scan_inputs(inputs, DOCUMENT_SUFFIXES, recursive)


def plan_outputs(args: argparse.Namespace, found: list[tuple[Path | str, Path]]) -> list[Job]:
    """Where each input's output goes (see the module docstring); raises ``ValueError`` on a bad request."""
    out, fmt = (None if args.output is None else Path(args.output)), args.format
    if STDIO in args.inputs and len(args.inputs) > 1:
        raise ValueError("- (stdin) must be the only input")
    if out == STDIO or (out is None and args.inputs == [STDIO]):
        if len(found) != 1:
            raise ValueError("-o - (stdout) takes one input")
        return [Job(found[0][0], None)]
    if out is None:
        if fmt == "pdf":
            raise ValueError("--format pdf needs -o OUT")
        if fmt != "txt" and len(found) > 1:
            raise ValueError(f"--format {fmt} for several inputs needs -o DIR")
        return [Job(src, None) for src, _ in found]
    single_file = len(args.inputs) == 1 and len(found) == 1 and str(found[0][0]) == str(args.inputs[0])
    as_dir = out.is_dir() or str(args.output).endswith(os.sep) or not single_file
    if not as_dir:
        return [Job(found[0][0], out)] if found else []
    jobs = [Job(src, output_path(out / rel, fmt)) for src, rel in found]
    if any(j.output is not None and not is_uri(j.source) and j.output.resolve() == Path(j.source).resolve()
           for j in jobs):
        raise ValueError("an output would overwrite its input; give another -o folder")
    targets = [j.output for j in jobs]
    if len(set(targets)) != len(targets):
        raise ValueError("two inputs would write the same output file; give them separate -o folders")
    return jobs


def text_output(doc: Document, fmt: str) -> str:
    """The text of a text output format (:mod:`vision.export.formats`)."""
    if get_format(fmt).binary:
        raise ValueError(f"{fmt!r} is not a text format")
    return render_format(doc, fmt).decode()


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` (making its folder) through a temporary sibling renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, data)


def _process(job: Job, lanes: queue.SimpleQueue, args: argparse.Namespace) -> tuple[int, str | bytes | None]:
    """OCR one input with an idle predictor of ``lanes`` and write its output file; returns its page count
    and, for stdout, its text (written by the caller, in input order)."""
    data, redo = without_ocr_layer(read_input(job.source, args), str(job.source), args)
    predictor = lanes.get()
    try:
        with open_pages(data, str(job.source), args, redo) as pages:
            doc = predictor(pages)
    finally:
        lanes.put(predictor)
    return finish_job(job, doc, data, args, getattr(pages, "visible", None))


def finish_job(job: Job, doc: Document, data: bytes | None, args: argparse.Namespace,
               redo: dict | None = None) -> tuple[int, str | bytes | None]:
    """Report ``doc``'s page warnings and write its output (``data``: the input's bytes, read again when
    ``None`` and the format needs them; ``redo``: ``--redo-ocr``'s pages and their visible text, see
    :func:`~vision.app.cli._ocr_io.pdf_bytes`); returns its page count and, for stdout, its text."""
    for page in doc.pages:  # e.g. text in a script no shipped recognizer reads
        for warning in page.warnings:
            print(f"warning: {job.source} page {page.page_idx + 1}: {warning}", file=sys.stderr)
    if args.format == "pdf":
        pdf = pdf_bytes(data if data is not None else read_input(job.source, args), doc, args, str(job.source),
                        redo)
        if job.output is None:
            return len(doc.pages), pdf
        write_atomically(job.output, pdf)
    elif job.output is None:
        return len(doc.pages), text_output(doc, args.format)
    else:
        write_atomically(job.output, render_format(doc, args.format, dpi=args.dpi))
    return len(doc.pages), None


def pending_jobs(jobs: list[Job]) -> tuple[list[Job], int]:
    """The jobs whose output file does not exist yet, and how many were dropped (``--resume``)."""
    pending = [job for job in jobs if job.output is None or not job.output.is_file()]
    return pending, len(jobs) - len(pending)


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
    try:
        args.inputs = listed_inputs(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    found, problems = collect_inputs(args.inputs, args.recursive)
    try:
        from vision.predictors.recognition.languages import parse_lang

        parse_lang(getattr(args, "lang", None))
        jobs = plan_outputs(args, found)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for message in problems:
        print(f"error: {message}", file=sys.stderr)
    if getattr(args, "resume", False):
        jobs, done = pending_jobs(jobs)
        if done:
            print(f"resume: {done} input(s) already have their output, skipped", file=sys.stderr)
        if not jobs and not problems:
            return 0
    if not jobs:
        if not problems:
            print("error: no image or PDF files found in the inputs", file=sys.stderr)
        return 1
    if args.jobs is not None and args.jobs < 0:
        print("error: --jobs must be 0 or more", file=sys.stderr)
        return 2
    failed = len(problems)
    # --redo-ocr reads each PDF twice (layer stripped, visible text kept): the lanes of this process
    bulk = not getattr(args, "redo_ocr", False)
    if hasattr(args, "replicas"):
        from vision.app.cli._ocr_engines import auto_replicas

        given = args.replicas is not None
        args.replicas = auto_replicas(args, len(jobs)) if bulk and predictor is None else (args.replicas or 1)
        if not given and args.replicas > 1 and not all(is_file_job(j) for j in jobs):
            args.replicas = 1
    spread = getattr(args, "devices", None) or getattr(args, "replicas", 1) > 1
    if not bulk and (spread or getattr(args, "engine", "local") == "ray"):
        print("note: --redo-ocr runs in this process (--engine, --devices and --replicas are ignored)",
              file=sys.stderr)
    elif getattr(args, "model_server", False) and not spread:
        print("note: --model-server serves several processes of a device (--replicas N, --devices); this run "
              "has one, which holds its models itself", file=sys.stderr)
    if bulk and (getattr(args, "engine", "local") == "ray" or spread):
        from vision.app.cli._ocr_engines import run_engine

        return run_engine(args, jobs, failed)
    bulk = bulk and not cpu_lanes(args, jobs)  # --jobs N on the CPU: N predictor lanes, 1/N of the threads each
    if bulk and (predictor is None or hasattr(predictor, "map")) and all(is_file_job(j) for j in jobs):
        return _run_bulk(args, jobs, predictor, failed)
    import torch

    threads = torch.get_num_threads()
    n = (
        1 if predictor is not None else min(args.jobs or 1, len(jobs))
    )  # an embedding application's predictor: alone
    lanes: queue.SimpleQueue = queue.SimpleQueue()
    try:
        for p in [predictor] if predictor is not None else build_lanes(args, n):
            lanes.put(p)
    except BaseException:
        torch.set_num_threads(threads)
        raise
    bar = tqdm(total=len(jobs), unit="file", desc="ocr", file=sys.stderr, disable=args.no_progress or None)
    pages = 0
    pool = ThreadPoolExecutor(n, thread_name_prefix="ocr")
    try:
        futures: list[Future] = [pool.submit(_process, job, lanes, args) for job in jobs]
        for job, future in zip(jobs, futures):  # in input order: stdout keeps it
            try:
                count, text = future.result()
                pages += count
                write_stdout(job.source, text, many=len(jobs) > 1)
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


def _run_bulk(args: argparse.Namespace, jobs: list[Job], predictor: Any, failed: int) -> int:
    """Every file input through the bulk engine (:mod:`vision.app.cli._ocr_bulk`)."""
    predictor = predictor if predictor is not None else build_predictor(args)
    workers = args.jobs if args.jobs is not None else default_jobs(args.device)
    bar = tqdm(total=len(jobs), unit="file", desc="ocr", file=sys.stderr, disable=args.no_progress or None)
    try:
        _, errors = run_bulk(args, jobs, predictor, bar, min(workers, len(jobs)))
    finally:
        bar.close()
    return 1 if failed + errors else 0
