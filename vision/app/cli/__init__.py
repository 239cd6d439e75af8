"""The ``vision`` command. Each sub-command is a module of this package exposing

``register(subparsers) -> None``, which adds its parser and sets ``func=run(args) -> int`` as default.
Modules are discovered, so a new command is a new file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from vision.errors import VisionError

__all__ = ["main", "build_parser"]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``vision`` parser; with ``command`` (a sub-command's module name), only that sub-command.

    Registering ``train`` and ``eval`` imports every training and evaluation task, and through them
    torchvision (which imports ``torch._dynamo``): seconds that ``vision ocr`` need not pay before its first
    page.
    """
    parser = argparse.ArgumentParser(prog="vision", description="Document OCR and vision pipeline.")
    from vision import __version__

    parser.add_argument("--version", action="version", version=f"vision {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = [i.name for i in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name)
             if not i.name.startswith("_")]
    for name in [command] if command in names else names:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code.

    ``vision --version`` answers before the sub-commands (and torch) are imported.
    """
    given = sys.argv[1:] if argv is None else argv
    if given == ["--version"]:
        from vision import __version__

        print(f"vision {__version__}")
        return 0
    parser = build_parser(given[0] if given and not given[0].startswith("-") else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except VisionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        from vision.app.cli._extras import missing_extra_message

        message = missing_extra_message(exc, args.command)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
