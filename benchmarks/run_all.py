"""`make bench`: run the CPU benchmarks one after another; each prints its table and writes its JSON.

GPU benchmarks (`gpu_throughput.py`, `sam.py`, `video.py --mode gpu`, `--device cuda` modes) run on the GPU
machine; see docs/benchmarks.md for their commands.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
CPU_RUNS = [
    ["recognition.py", "--device", "cpu"],
    ["detection.py", "--device", "cpu"],
    ["cpu_vs_tesseract.py"],
    ["video.py", "--mode", "cpu"],
    ["batching.py"],
    ["fuzz_readers.py"],
    ["cli_startup.py"],
]


def main() -> int:
    failed = []
    for script, *args in CPU_RUNS:
        print(f"\n=== {script} {' '.join(args)}", flush=True)
        if subprocess.call([sys.executable, str(HERE / script), *args]) != 0:
            failed.append(script)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
