"""``vision eval TASK --data DIR [--json]``: score models on the evaluation sets (see vision.evaluation)."""

from __future__ import annotations

import argparse

from vision.app.cli._discover import add_task_command


def register(subparsers: argparse._SubParsersAction) -> None:
    add_task_command(
        subparsers, "eval", "evaluate a model or the whole OCR on a ground-truth set", "vision.evaluation"
    )
