"""Shared by sub-commands: the input-limit and OCR-model options, and the scan of input files and folders."""

from __future__ import annotations

import argparse
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vision.settings import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from vision.pipelines.ocr import OCRPredictor

__all__ = [
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


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--max-bytes``, ``--max-pixels``, ``--max-pages`` and ``--max-frames`` (defaults from Limits)."""
    group = parser.add_argument_group("input limits")
    d = DEFAULT_LIMITS
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
    add_limit_arguments(parser)


def limits_from_args(args: argparse.Namespace, base: Limits = DEFAULT_LIMITS) -> Limits:
    """The :class:`Limits` given on the command line, falling back to ``base`` for options left out."""
    return base.replace(
        max_bytes=getattr(args, "max_bytes", None),
        max_pixels=getattr(args, "max_pixels", None),
        max_pages=getattr(args, "max_pages", None),
        max_frames=getattr(args, "max_frames", None),
    )


def add_ocr_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--det-arch``, ``--reco-arch``, ``--det-weights``, ``--reco-weights``, ``--device`` and ``-l/--lang``."""
    parser.add_argument("--det-arch", default=None, help="registered detection model (default: the default)")
    parser.add_argument(
        "--reco-arch", default=None, help="registered recognition model (default: the default)"
    )
    parser.add_argument("--det-weights", default="default", help="'default', a safetensors file, or 'none'")
    parser.add_argument("--reco-weights", default="default", help="'default', a safetensors file, or 'none'")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: CUDA when available)")
    parser.add_argument(
        "-l",
        "--lang",
        default=None,
        help="the documents' languages, e.g. de or de+fr (picks the lexicons; default: English lexicon, "
        "every Latin-script language read)",
    )


def _weights(value: str) -> str | None:
    """A weights option: ``none`` or ``random`` mean randomly initialised models (``None``)."""
    return None if value.lower() in ("none", "random") else value


def ocr_predictor_from_args(args: argparse.Namespace, **options: Any) -> OCRPredictor:
    """The OCR predictor of :func:`add_ocr_model_arguments`' options; ``options`` go to ``ocr_predictor``."""
    from vision.pipelines.ocr import ocr_predictor

    return ocr_predictor(
        args.det_arch,
        args.reco_arch,
        det_weights=_weights(args.det_weights),
        reco_weights=_weights(args.reco_weights),
        device=args.device,
        lang=getattr(args, "lang", None),
        **options,
    )


def scan_inputs(
    inputs: list[Path], suffixes: Collection[str], recursive: bool
) -> tuple[list[tuple[Path, Path]], list[str]]:
    """The files to process, and messages for inputs that do not exist.

    Files named are taken whatever their extension; folders contribute their files whose lower-cased
    suffix is in ``suffixes`` (sorted; subfolders too when ``recursive``).

    Returns:
        ``(file, name relative to the folder given)`` pairs (a named file: its own name), and the messages.
    """
    found, problems = [], []
    for item in inputs:
        if item.is_dir():
            paths = item.rglob("*") if recursive else item.iterdir()
            for path in sorted(p for p in paths if p.is_file() and p.suffix.lower() in suffixes):
                found.append((path, path.relative_to(item)))
        elif item.is_file():
            found.append((item, Path(item.name)))
        else:
            problems.append(f"{item}: no such file or folder")
    return found, problems
