"""Build ``.carry/thru``: what ``benchmarks/ocr_throughput.py`` and ``benchmarks/shape_cliffs.py`` need on a GPU
machine that receives only the repository checkout.

    python benchmarks/throughput_carry.py [--data ../shared/data/funsd_dev] [--dest .carry/thru]

Writes (about 30 MB):

* ``DEST/funsd_dev``: the ground-truth set (page images: the sources of the rendered pages; ground truth: the
  F1 step);
* ``DEST/whl``: wheels for Python 3.12 (manylinux x86_64) of the dependencies GPU images tend to lack
  (pyclipper, rapidfuzz, pypdfium2, fpdf2, defusedxml, fonttools, pikepdf, img2pdf, apted), fetched with
  ``pip download``; ``run.sh`` installs only those the machine cannot import;
* ``DEST/run.sh``: one command per step, each within a 10-minute device call::

      bash .carry/thru/run.sh quick     # 120 pages: vision ocr (2 variants), API, map; no harness (a check)
      bash .carry/thru/run.sh cli       # 1,200 pages: vision ocr (defaults, --no-compile, --replicas 12)
      bash .carry/thru/run.sh api       # public API fp32 / bf16 / bf16+compile, 50 pages a call; map
      bash .carry/thru/run.sh harness   # gpu_throughput.py (fp32, bf16+compile; 768 pages, 12 workers)
      bash .carry/thru/run.sh f1        # funsd_dev end-to-end F1: fp32 eager vs the device defaults
      bash .carry/thru/run.sh cliffs    # shape_cliffs.py: 200 new page sizes, 200 new crop sets

  Each writes its JSON (and a log) to ``$OUT``; extra arguments go to the benchmark.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WHEELS = ("pyclipper", "rapidfuzz", "pypdfium2", "fpdf2", "defusedxml", "fonttools", "pikepdf", "img2pdf", "apted")
MODULES = {"pyclipper": "pyclipper", "rapidfuzz": "rapidfuzz", "pypdfium2": "pypdfium2", "fpdf2": "fpdf",
           "defusedxml": "defusedxml", "fonttools": "fontTools", "pikepdf": "pikepdf", "img2pdf": "img2pdf",
           "apted": "apted"}

RUN = r"""#!/bin/bash
# GPU throughput benchmarks of issue 31 (built by benchmarks/throughput_carry.py). Usage:
#   bash .carry/thru/run.sh quick|cli|api|harness|f1|cliffs [extra benchmark arguments]
set -u
C=.carry/thru
MODE=${1:-quick}; shift || true
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for pair in %(pairs)s; do
  mod=${pair%%%%:*}; pkg=${pair##*:}
  python3 -c "import $mod" 2>/dev/null || pip install -q --no-index --no-deps --target /tmp/site $C/whl/${pkg}-*.whl
done
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1 VISION_CACHE=/tmp/vision-cache
nvidia-smi -L; nproc; python3 -c "import torch; print(torch.__version__)"
T=benchmarks/ocr_throughput.py
S="--sources $C/funsd_dev/images"
case $MODE in
  quick)   python3 $T $S --quick --out $OUT/ocr_throughput_quick.json "$@" 2>&1 | tee $OUT/quick.log | tail -80 ;;
  cli)     python3 $T $S --count 1200 --skip harness,api,map,f1 --out $OUT/ocr_throughput_cli.json "$@" 2>&1 | tee $OUT/cli.log | tail -120 ;;
  api)     python3 $T $S --count 600 --skip harness,cli,f1 --out $OUT/ocr_throughput_api.json "$@" 2>&1 | tee $OUT/api.log | tail -120 ;;
  harness) python3 $T $S --skip cli,api,map,f1 --out $OUT/ocr_throughput_harness.json "$@" 2>&1 | tee $OUT/harness.log | tail -80 ;;
  f1)      python3 $T $S --skip cli,api,map,harness --data $C/funsd_dev --out $OUT/ocr_throughput_f1.json "$@" 2>&1 | tee $OUT/f1.log | tail -80 ;;
  cliffs)  python3 benchmarks/shape_cliffs.py --device cuda --pages-from $C/funsd_dev/images --out $OUT/shape_cliffs.json "$@" 2>&1 | grep -v '^   [0-9]' | tee $OUT/cliffs.log | tail -60 ;;
  *) echo "usage: bash $C/run.sh quick|cli|api|harness|f1|cliffs [args]"; exit 2 ;;
esac
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "funsd_dev")
    parser.add_argument("--dest", type=Path, default=REPO / ".carry" / "thru")
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--no-wheels", action="store_true")
    args = parser.parse_args(argv)
    dest = args.dest
    dest.mkdir(parents=True, exist_ok=True)
    if not (args.data / "images").is_dir():
        raise SystemExit(f"{args.data}: no images/ folder (give --data DIR, a funsd_dev copy)")
    shutil.rmtree(dest / "funsd_dev", ignore_errors=True)
    shutil.copytree(args.data, dest / "funsd_dev")
    if not args.no_wheels:
        (dest / "whl").mkdir(exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", args.python, "--platform", "manylinux2014_x86_64",
                        "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
                        "-d", str(dest / "whl"), *WHEELS], check=True)
    pairs = " ".join(f"{MODULES[w]}:{w}" for w in WHEELS)
    run = dest / "run.sh"
    run.write_text(RUN % {"pairs": pairs})
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    print(f"{dest}: {size / 1e6:.1f} MB; on the GPU machine: bash {dest.relative_to(REPO)}/run.sh quick")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
