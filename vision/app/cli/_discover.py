"""Find task modules in a package: modules that define ``TASK``, ``add_arguments(parser)`` and ``run(args)``."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from types import ModuleType

__all__ = ["add_task_command", "task_modules"]


def task_modules(package: str) -> dict[str, ModuleType]:
    """Map ``TASK`` name -> module for every module of ``package`` that declares one."""
    pkg = importlib.import_module(package)
    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        task = getattr(module, "TASK", None)
        if task is not None and hasattr(module, "add_arguments") and hasattr(module, "run"):
            found[task] = module
    return dict(sorted(found.items()))


def add_task_command(
    subparsers: argparse._SubParsersAction, command: str, summary: str, package: str
) -> None:
    """Add ``vision COMMAND TASK ...`` (help: ``summary``) with one sub-command per task module of ``package``.

    Each task's help is the first line of its module docstring; its options come from ``add_arguments``.
    """
    parser = subparsers.add_parser(command, help=summary)
    tasks = parser.add_subparsers(dest="task", metavar="TASK", required=True)
    for name, module in task_modules(package).items():
        sub = tasks.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0])
        module.add_arguments(sub)
        sub.set_defaults(func=module.run)
