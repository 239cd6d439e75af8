"""``vision ui [--host --port --config]``: the Gradio UI alone (the server also mounts it at /ui)."""

from __future__ import annotations

import argparse
from pathlib import Path

from vision.app.cli._common import add_limit_arguments
from vision.app.cli.serve import export_settings

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ui", help="run the Gradio UI (upload a page, a PDF or a video)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="TOML or JSON settings file (same keys as the VISION_* variables)",
    )
    add_limit_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vision.app.api.settings import ServiceSettings
    from vision.app.ui import launch_ui

    export_settings(args)
    launch_ui(ServiceSettings(), host=args.host, port=args.port)
    return 0
