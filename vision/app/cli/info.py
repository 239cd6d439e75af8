"""``vision info FILE... [--json]``: type, pages or frames, sizes, dpi and PDF text layers (no decoding)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from vision.app.cli._common import add_limit_arguments, limits_from_args
from vision.errors import VisionError
from vision.io import DocumentFile


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``info`` sub-command."""
    parser = subparsers.add_parser(
        "info", help="describe images, PDFs and videos (type, pages, sizes, text layer)"
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="files to describe (format sniffed from content)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON list instead of text")
    parser.add_argument(
        "--dpi", type=float, default=144, help="PDF rendering resolution for pixel sizes (144)"
    )
    parser.add_argument("--password", default=None, help="password for encrypted PDFs")
    add_limit_arguments(parser)
    parser.set_defaults(func=run)


def describe_file(path: str, args: argparse.Namespace) -> dict[str, Any]:
    """``DocumentFile.describe()`` of one file, or ``{"source", "error": {"type", "message"}}``."""
    try:
        with DocumentFile.from_path(
            path, dpi=args.dpi, password=args.password, limits=limits_from_args(args)
        ) as doc:
            return doc.describe()
    except VisionError as exc:
        return {"source": path, "error": {"type": type(exc).__name__, "message": str(exc)}}
    except ValueError as exc:  # e.g. a video whose sampled range is empty
        return {"source": path, "error": {"type": "ValueError", "message": f"{path}: {exc}"}}


def _text_lines(info: dict[str, Any]) -> list[str]:
    """Human-readable lines for one file."""
    src = info["source"]
    if "error" in info:
        return [f"error: {info['error']['message']} ({info['error']['type']})"]
    if info["kind"] == "pdf":
        lines = [
            f"{src}: pdf, {len(info['pages'])} of {info['page_count']} pages, rendered at {info['dpi']:g} dpi"
        ]
        for p in info["pages"]:
            size = f"{p['width_pt']:g}x{p['height_pt']:g} pt -> {p['width']}x{p['height']} px"
            lines.append(f"  page {p['index']}: {size}, text layer: {'yes' if p['has_text'] else 'no'}")
        return lines
    if info["kind"] == "video":
        return [
            f"{src}: video ({info['codec']}), {info['frames']} frames, {info['width']}x{info['height']}, "
            f"{info['average_fps'] or 0:.3g} fps, {info['duration']:.2f} s"
        ]
    lines = [f"{src}: image, {len(info['pages'])} page{'s' if len(info['pages']) != 1 else ''}"]
    for p in info["pages"]:
        dpi = f", {p['dpi']:g} dpi" if p.get("dpi") else ""
        lines.append(f"  page {p['index']}: {p['format']} {p['width']}x{p['height']} {p['mode']}{dpi}")
    return lines


def run(args: argparse.Namespace) -> int:
    """Describe every file; report failures and continue. Exit code 1 if any file failed."""
    infos = [describe_file(path, args) for path in args.files]
    if args.json:
        json.dump(infos, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for info in infos:
            stream = sys.stderr if "error" in info else sys.stdout
            print("\n".join(_text_lines(info)), file=stream)
    return 1 if any("error" in info for info in infos) else 0
