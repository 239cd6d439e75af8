"""``vision ocr DIR -o OUT --engine ray`` against the local engine on this machine's CPU, in one run.

    python benchmarks/ray_cpu.py [--data ../shared/data] [--sets funsd_dev,sroie_dev,...] [--rounds 1]

Links the page images of the named evaluation sets into one folder, then runs each command in a fresh
process (Ray starts its own local instance), local first, ``--rounds`` times, timing from the command's
start to its exit and to its first and last output file. The outputs of both engines must be identical.
Writes ``benchmarks/results/ray_cpu_vs_local.json``.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETS = "funsd_dev,sroie_dev,ml_dev,wildreceipt_dev,ic15_dev,tables_dev"
MAIN = "import sys; from vision.app.cli import main; sys.exit(main())"


def link_pages(data: Path, sets: list[str], dest: Path) -> int:
    """Symlink every page image of ``sets`` into ``dest`` as ``SET__NAME``; returns the count."""
    count = 0
    for name in sets:
        for image in sorted((data / name / "images").iterdir()):
            (dest / f"{name}__{image.name}").symlink_to(image.resolve())
            count += 1
    return count


def run(inputs: Path, out: Path, extra: list[str]) -> dict[str, float]:
    """One ``vision ocr`` process: seconds to exit, to the first and to the last output file."""
    start = time.time()
    subprocess.run([sys.executable, "-c", MAIN, "ocr", str(inputs), "-o", str(out), "--no-progress", *extra],
                   check=False, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.time()
    times = sorted(p.stat().st_mtime for p in out.iterdir())
    return {"exit_s": round(end - start, 1), "first_file_s": round(times[0] - start, 1),
            "last_file_s": round(times[-1] - start, 1), "files": len(times)}


def same_outputs(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    return names == sorted(p.name for p in b.iterdir()) and not filecmp.cmpfiles(a, b, names, shallow=False)[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sets", default=SETS)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "ray_cpu_vs_local.json")
    args = parser.parse_args()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="vision-ray-cpu-") as tmp:
        inputs = Path(tmp) / "in"
        inputs.mkdir()
        pages = link_pages(args.data, args.sets.split(","), inputs)
        for k in range(args.rounds):
            for engine, extra in (("local", []), ("ray", ["--engine", "ray"])):
                out = Path(tmp) / f"{engine}{k}"
                row = {"round": k, "engine": engine, **run(inputs, out, extra)}
                rows.append(row)
                print(json.dumps(row), flush=True)
            identical = same_outputs(Path(tmp) / f"local{k}", Path(tmp) / f"ray{k}")
            rows[-1]["same_outputs_as_local"] = identical
            for engine in ("local", "ray"):
                shutil.rmtree(Path(tmp) / f"{engine}{k}")
    local = sum(r["exit_s"] for r in rows if r["engine"] == "local")
    ray = sum(r["exit_s"] for r in rows if r["engine"] == "ray")
    result = {"machine": f"{platform.machine()} ({__import__('os').cpu_count()} CPUs)", "sets": args.sets,
              "pages": pages, "rows": rows, "ray_over_local": round(ray / local, 3)}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{pages} pages: ray {ray:.1f} s / local {local:.1f} s = {ray / local:.3f}x")
    return 0 if all(r.get("same_outputs_as_local", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
