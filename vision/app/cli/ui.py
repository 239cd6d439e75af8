"""``vision ui [--host --port --config]``: the Gradio UI alone (the server also mounts it at /ui)."""

from __future__ import annotations

import argparse

from vision.app.cli._common import add_server_arguments
from vision.app.cli.serve import export_settings

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ui", help="run the Gradio UI (upload a page, a PDF or a video)")
    add_server_arguments(parser, port=7860)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vision.app.api.settings import ServiceSettings
    from vision.app.ui import launch_ui

    export_settings(args)
    launch_ui(ServiceSettings(), host=args.host, port=args.port)
    return 0
