"""Options shared by every sub-command: the input limits of :class:`vision.settings.Limits`."""

from __future__ import annotations

import argparse

from vision.settings import DEFAULT_LIMITS, Limits

__all__ = ["add_limit_arguments", "limits_from_args"]


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


def limits_from_args(args: argparse.Namespace, base: Limits = DEFAULT_LIMITS) -> Limits:
    """The :class:`Limits` given on the command line, falling back to ``base`` for options left out."""
    return base.replace(
        max_bytes=getattr(args, "max_bytes", None),
        max_pixels=getattr(args, "max_pixels", None),
        max_pages=getattr(args, "max_pages", None),
        max_frames=getattr(args, "max_frames", None),
    )
