"""Find task modules in a package: modules that define ``TASK``, ``add_arguments(parser)`` and ``run(args)``."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

__all__ = ["task_modules"]


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
