"""``vision train TASK --config FILE``: the same entry point as ``python -m vision.training.TASK``."""

from __future__ import annotations

import argparse

from vision.app.cli._discover import add_task_command


def register(subparsers: argparse._SubParsersAction) -> None:
    add_task_command(subparsers, "train", "train a model (resumable; see vision.training)", "vision.training")
