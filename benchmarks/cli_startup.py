"""`vision --version` wall time (target < 0.5 s: it must not import torch), against a bare interpreter.

    python benchmarks/cli_startup.py [--runs 7]

Runs each command ``--runs`` times in fresh processes; prints the median and writes
``benchmarks/results/cli_startup.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
COMMANDS = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "vision --version": [
        sys.executable,
        "-c",
        "import sys; from vision.app.cli import main; sys.exit(main(['--version']))",
    ],
    "vision --help": [
        sys.executable,
        "-c",
        "import sys; from vision.app.cli import main; sys.exit(main(['--help']))",
    ],
}


def _time(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rows = {name: _time(cmd, args.runs) for name, cmd in COMMANDS.items()}
    base = rows["python -c pass (baseline)"]
    print(f"{'command':32} {'median s':>9} {'x baseline':>11}")
    for name, seconds in rows.items():
        print(f"{name:32} {seconds:9.3f} {seconds / base:11.1f}")
    out = {
        "machine": platform.node(),
        "cpus": platform.processor() or platform.machine(),
        "runs": args.runs,
        "median_s": rows,
    }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "cli_startup.json").write_text(json.dumps(out, indent=1) + "\n")
    return 0 if rows["vision --version"] < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
