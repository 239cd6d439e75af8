"""Shared by sub-commands: the input-limit and OCR-model options, and the scan of input files and folders."""

from __future__ import annotations

import argparse
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vision.settings import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from vision.pipelines.ocr.predictor import OCRPredictor

__all__ = [
    "ServiceLimitsFormatter",
    "add_limit_arguments",
    "add_ocr_model_arguments",
    "add_server_arguments",
    "limits_from_args",
    "ocr_predictor_from_args",
    "scan_inputs",
]


def _positive_int(text: str) -> int:
    """argparse type: a positive integer, with an optional ``k``/``M``/``G`` suffix (powers of 1000)."""
    scale = {"k": 10**3, "m": 10**6, "g": 10**9}
    raw = text.strip()
    factor = scale.get(raw[-1:].lower(), 1)
    digits = raw[:-1] if factor != 1 else raw
    try:
        value = int(float(digits) * factor)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_float(text: str) -> float:
    """argparse type: a positive number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


class _ServiceDefaults:
    """Stands for the service's limits in help texts until they are printed (see ServiceLimitsFormatter)."""

    def __getattr__(self, name: str) -> str:
        return "{service:" + name + "}"


class ServiceLimitsFormatter(argparse.HelpFormatter):
    """Help of server commands: shows the limits the service enforces (``vision.app.api.settings``), read
    only when help is printed, so building the parser does not import the service."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if text is None or "{service:" not in text:
            return text
        name = text.split("{service:", 1)[1].split("}", 1)[0]
        try:
            from vision.app.api.settings import LimitSettings

            value: Any = getattr(LimitSettings(), name)
        except ModuleNotFoundError:  # no [serve] extra: running the command says what to install
            value = getattr(DEFAULT_LIMITS, name)
        return text.replace("{service:" + name + "}", str(value))


def add_limit_arguments(parser: argparse.ArgumentParser, defaults: Any = DEFAULT_LIMITS) -> None:
    """Add ``--max-bytes``, ``--max-pixels``, ``--max-pages`` and ``--max-frames``; their help shows the
    defaults in force (``defaults``: :class:`Limits`, or the service's, filled in when help is printed)."""
    group = parser.add_argument_group("input limits")
    d = defaults
    group.add_argument(
        "--max-bytes",
        type=_positive_int,
        default=None,
        metavar="N",
        help=f"largest accepted file in bytes (default {d.max_bytes})",
    )
    group.add_argument(
        "--max-pixels",
        type=_positive_int,
        default=None,
        metavar="N",
        help=f"largest decoded page or frame, width*height (default {d.max_pixels})",
    )
    group.add_argument(
        "--max-pages",
        type=_positive_int,
        default=None,
        metavar="N",
        help=f"most pages read from one document (default {d.max_pages})",
    )
    group.add_argument(
        "--max-frames",
        type=_positive_int,
        default=None,
        metavar="N",
        help=f"most frames sampled from one video (default {d.max_frames})",
    )
    group.add_argument(
        "--pdf-timeout",
        type=_positive_float,
        default=None,
        metavar="S",
        help=f"seconds allowed to open a PDF or render one page; past it the file is skipped "
        f"(default {DEFAULT_LIMITS.pdf_timeout_s:g})",
    )


def add_server_arguments(parser: argparse.ArgumentParser, *, port: int) -> None:
    """Add ``--host``, ``--port`` (default ``port``), ``--config`` and the input limits of a server command."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=port, help=f"port (default {port})")
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="TOML or JSON settings file (same keys as the VISION_* variables)",
    )
    parser.formatter_class = ServiceLimitsFormatter
    add_limit_arguments(parser, _ServiceDefaults())


def limits_from_args(args: argparse.Namespace, base: Limits = DEFAULT_LIMITS) -> Limits:
    """The :class:`Limits` given on the command line, falling back to ``base`` for options left out."""
    return base.replace(
        max_bytes=getattr(args, "max_bytes", None),
        max_pixels=getattr(args, "max_pixels", None),
        max_pages=getattr(args, "max_pages", None),
        max_frames=getattr(args, "max_frames", None),
        pdf_timeout_s=getattr(args, "pdf_timeout", None),
    )


def add_ocr_model_arguments(parser: argparse.ArgumentParser) -> None:
    """:func:`vision.pipelines.ocr.options.add_model_arguments` (imported when a command is registered)."""
    from vision.pipelines.ocr.options import add_model_arguments

    add_model_arguments(parser)


def ocr_predictor_from_args(args: argparse.Namespace, **changes: Any) -> OCRPredictor:
    """The OCR predictor of :func:`add_ocr_model_arguments`' flags; ``changes`` are further
    :class:`~vision.pipelines.ocr.options.OCROptions` fields."""
    from vision.pipelines.ocr.options import options_from_args
    from vision.pipelines.ocr.predictor import ocr_predictor

    return ocr_predictor(options=options_from_args(args, **changes))


def scan_inputs(
    inputs: list[Path | str], suffixes: Collection[str], recursive: bool
) -> tuple[list[tuple[Path | str, Path]], list[str]]:
    """The files to process, and messages for inputs that do not exist.

    Files named are taken whatever their extension; folders contribute their files whose lower-cased
    suffix is in ``suffixes`` (sorted; subfolders too when ``recursive``). A URI (a ``str`` such as
    ``s3://bucket/scans/``, :mod:`vision.io.remote`) is listed the same way and its files stay URIs.

    Returns:
        ``(file, name relative to the folder given)`` pairs (a named file: its own name), and the messages.
    """
    from vision.io.remote import is_uri, list_uri

    found: list[tuple[Path | str, Path]] = []
    problems = []
    for item in inputs:
        if is_uri(item):
            files, messages = list_uri(str(item), suffixes, recursive)
            found += files
            problems += messages
            continue
        item = Path(item)
        if item.is_dir():
            paths = item.rglob("*") if recursive else item.iterdir()
            for path in sorted(p for p in paths if p.is_file() and p.suffix.lower() in suffixes):
                found.append((path, path.relative_to(item)))
        elif item.is_file():
            found.append((item, Path(item.name)))
        else:
            problems.append(f"{item}: no such file or folder")
    return found, problems
