"""``vision eval TASK --data DIR [--json]``: score models on the evaluation sets (see vision.evaluation)."""

from __future__ import annotations

import argparse

from vision.app.cli._discover import task_modules


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("eval", help="evaluate a model or the whole OCR on a ground-truth set")
    tasks = parser.add_subparsers(dest="task", metavar="TASK", required=True)
    for name, module in task_modules("vision.evaluation").items():
        sub = tasks.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0])
        module.add_arguments(sub)
        sub.set_defaults(func=module.run)
