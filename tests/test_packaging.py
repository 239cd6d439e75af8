"""Every data file the package reads at run time ships in the wheel (pyproject package-data covers it)."""

from __future__ import annotations

import fnmatch
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_package_data_covers_every_tracked_data_file() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["vision"]
    tracked = subprocess.run(["git", "ls-files", "vision"], cwd=ROOT, capture_output=True, text=True,
                             check=False).stdout.split()  # empty outside a git checkout: walk the tree
    data = [p for p in tracked if not p.endswith(".py")] or [
        str(p.relative_to(ROOT)) for p in (ROOT / "vision").rglob("*") if p.is_file() and p.suffix != ".py"
        and "__pycache__" not in p.parts
    ]
    assert any(p.endswith(".safetensors") for p in data)
    missing = [p for p in data if not any(fnmatch.fnmatch(p.removeprefix("vision/"), pat) for pat in patterns)]
    assert missing == []
