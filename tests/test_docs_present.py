"""Code, docstrings and docs state the present: no run-by-run history (that goes to CHANGELOG.md).

The check is the one in issue 29: no "session N" in the package, the docs, the README or the benchmarks, and every
training config under ``configs/`` that a doc names exists.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HISTORY = re.compile(r"session[ -][0-9]", re.IGNORECASE)
SOURCES = [*(ROOT / "vision").rglob("*.py"), *(ROOT / "docs").rglob("*.md"),
           *(ROOT / "benchmarks").glob("*.py"), ROOT / "README.md"]


def test_no_run_history_in_code_and_docs() -> None:
    assert len(SOURCES) > 50
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in SOURCES
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if HISTORY.search(line)]
    assert hits == []


def test_configs_named_in_docs_exist() -> None:
    docs = [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    text = "\n".join(path.read_text(encoding="utf-8") for path in docs)
    named = set(re.findall(r"configs/[\w/.-]+?\.json", text))
    assert named, "the model cards name their training configs"
    assert sorted(c for c in named if not (ROOT / c).is_file()) == []
