"""``vision train TASK --config FILE``: the same entry point as ``python -m vision.training.TASK``."""

from __future__ import annotations

import argparse

from vision.app.cli._discover import task_modules


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("train", help="train a model (resumable; see vision.training)")
    tasks = parser.add_subparsers(dest="task", metavar="TASK", required=True)
    for name, module in task_modules("vision.training").items():
        sub = tasks.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0])
        module.add_arguments(sub)
        sub.set_defaults(func=module.run)
