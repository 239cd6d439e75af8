"""``vision ocr``'s inputs: paths and URIs named on the command line or listed in ``--files-from``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vision.io.remote import is_uri

__all__ = ["LIST_BYTES", "input_name", "listed_inputs"]

LIST_BYTES = 64 * 1024**2
"""Longest ``--files-from`` list read (about half a million long paths): a binary file named by mistake fails
with a message instead of filling memory."""


def input_name(text: str) -> Path | str:
    """argparse type of an input: a URI stays a ``str`` (``Path`` would fold its ``//``), anything else is a
    ``Path``."""
    return text if is_uri(text) else Path(text)


def listed_inputs(args: argparse.Namespace) -> list[Path | str]:
    """The positional inputs, then those of ``--files-from`` (blank lines and ``#`` comments skipped).

    Raises:
        ValueError: no input at all, or a list that cannot be read.
    """
    inputs = list(args.inputs)
    listing = getattr(args, "files_from", None)
    if listing is not None:
        try:
            if listing == "-":
                data = sys.stdin.buffer.read(LIST_BYTES + 1)
            else:
                with open(listing, "rb") as fh:
                    data = fh.read(LIST_BYTES + 1)
            if len(data) > LIST_BYTES:
                raise ValueError(f"longer than {LIST_BYTES} bytes")
            lines = [line.strip() for line in data.decode("utf-8").splitlines()]
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            raise ValueError(f"--files-from {listing}: {exc}") from None
        inputs += [input_name(line) for line in lines if line and not line.startswith("#")]
    if not inputs:
        raise ValueError("no inputs: name files, folders or URIs, or --files-from LIST")
    return inputs
