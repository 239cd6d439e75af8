"""``vision ocr`` over many files through the bulk engine (:mod:`vision.pipelines.ocr.bulk`).

Files are read (decoded, PDFs rendered) and their outputs made and written (post stages, the format's
writer, the atomic write) by worker processes; one predictor in this process runs the models on batches of
pages taken across files. With no workers everything runs in this process (reading in a thread).
Stdout outputs are written here, in input order. A file that fails is reported and the run goes on.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vision.errors import VisionError
from vision.structures import Document

__all__ = ["Finisher", "Reader", "cpu_lanes", "default_jobs", "is_file_job", "run_bulk", "write_stdout"]


@dataclass(frozen=True)
class Reader:
    """``job -> pages`` with the command's options (bytes limit, ``--dpi``, ``--pages``, ``--password``)."""

    args: argparse.Namespace

    def __call__(self, job: Any) -> list[Any]:
        from vision.app.cli._ocr_io import open_pages, read_input

        data = read_input(job.source, self.args)
        with open_pages(data, str(job.source), self.args) as pages:
            return list(pages)


@dataclass(frozen=True)
class Finisher:
    """``(job, document) -> (pages, text or bytes for stdout, or None)``: writes the job's output file."""

    args: argparse.Namespace

    def __call__(self, job: Any, doc: Document) -> tuple[int, str | bytes | None]:
        from vision.app.cli.ocr import finish_job

        return finish_job(job, doc, None, self.args)


def write_stdout(source: Any, text: str | bytes | None, *, many: bool) -> None:
    """An output meant for stdout: bytes as they are, text under a ``==> source <==`` header when ``many``."""
    if isinstance(text, bytes):
        sys.stdout.buffer.write(text)
        sys.stdout.buffer.flush()
    elif text is not None:
        sys.stdout.write((f"==> {source} <==\n" if many else "") + text)
        sys.stdout.flush()


def _cuda(device: str | None) -> bool:
    import torch

    return (device or ("cuda" if torch.cuda.is_available() else "cpu")).startswith("cuda")


def cpu_lanes(args: argparse.Namespace, jobs: list[Any]) -> bool:
    """Whether ``--jobs N`` means N predictor lanes in this process: N >= 2 on the CPU, no other engine."""
    n = getattr(args, "jobs", None)
    if n is None or n < 2 or getattr(args, "engine", "local") != "local" or getattr(args, "devices", None):
        return False
    return not _cuda(args.device)


def default_jobs(device: str | None) -> int:
    """Worker processes when ``--jobs`` is not given: none on the CPU (the models take every core; reading
    runs in a thread), else one per spare core up to 8 (host work keeps the GPU fed)."""
    return max(1, min(8, (os.cpu_count() or 2) - 1)) if _cuda(device) else 0


def run_bulk(args: argparse.Namespace, jobs: list[Any], predictor: Any, bar: Any, workers: int) -> tuple[int, int]:
    """OCR ``jobs`` with ``predictor.map``; returns ``(pages, failed)``."""
    pages = failed = 0
    results = predictor.map(jobs, workers=workers, read=Reader(args), finish=Finisher(args), errors="return")
    for job, result in zip(jobs, results):
        if isinstance(result, BaseException):
            if not isinstance(result, (VisionError, OSError)):
                raise result
            failed += 1
            reason = str(result) if isinstance(result, VisionError) else f"{job.source}: {result}"
            bar.write(f"error: {reason}", file=sys.stderr)
        else:
            count, text = result
            pages += count
            write_stdout(job.source, text, many=len(jobs) > 1)
        bar.set_postfix(pages=pages, failed=failed, refresh=False)
        bar.update(1)
    return pages, failed


def is_file_job(job: Any) -> bool:
    return Path(job.source) != Path("-")
