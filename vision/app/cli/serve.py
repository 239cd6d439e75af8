"""``vision serve [--host --port --workers --config]``: the REST service (and the UI at /ui) under uvicorn."""

from __future__ import annotations

import argparse
import os

from vision.app.cli._common import add_server_arguments

__all__ = ["export_settings", "register", "run"]

_LIMIT_ENV = {
    "max_bytes": "VISION_LIMITS__MAX_BYTES",
    "max_pixels": "VISION_LIMITS__MAX_PIXELS",
    "max_pages": "VISION_LIMITS__MAX_PAGES",
    "max_frames": "VISION_LIMITS__MAX_FRAMES",
    "pdf_timeout": "VISION_LIMITS__PDF_TIMEOUT_S",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("serve", help="run the REST service (OpenAPI docs at /docs, UI at /ui)")
    add_server_arguments(parser, port=8000)
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes; each loads its own models and shares the job store",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    parser.set_defaults(func=run)


def export_settings(args: argparse.Namespace) -> None:
    """Pass ``--config`` and limit flags to the worker processes through ``VISION_*`` variables."""
    if args.config is not None:
        os.environ["VISION_CONFIG_FILE"] = str(args.config.resolve())
    for name, env in _LIMIT_ENV.items():
        if getattr(args, name, None) is not None:
            os.environ[env] = str(getattr(args, name))


def run(args: argparse.Namespace) -> int:
    """Validate the settings here (a bad config fails before any worker starts), then serve."""
    import uvicorn

    from vision.app.api.settings import ServiceSettings

    from vision.app.api.server_protocol import GuardedH11Protocol

    export_settings(args)
    settings = ServiceSettings()
    uvicorn.run(
        "vision.app.api:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        timeout_graceful_shutdown=30,
        http=GuardedH11Protocol,  # request headers must arrive within 10 s
        limit_concurrency=settings.max_connections,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=64 * 1024,  # request line and headers
    )
    return 0
