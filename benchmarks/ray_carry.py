"""Build ``.carry/rs1``-``rs4`` and ``.carry/rsrun``: Ray on a GPU machine whose image lacks it.

    python benchmarks/ray_carry.py [--pages ../shared/data/funsd_dev/images] [--count 60]

GPU machines receive the repository checkout plus at most ~64 MB of carried files per call. Ray Data needs
Ray, pyarrow and pandas (~135 MB of wheels), so this script unpacks the Python 3.12 manylinux wheels of
``ray[data]`` (without numpy, which the images have), the package's own missing dependencies (those of
``benchmarks/throughput_carry.py``) and ``--count`` page images into one folder, drops the parts of Ray the
OCR engine never loads (``jars``, ``rllib``, ``llm``), strips the shared libraries' symbols, packs it with
``xz -9`` (~67 MB) and splits it into four parts. On a warm machine, four calls in a row, each carrying
``.carry/rsrun`` and one part::

    bash .carry/rsrun/run.sh 1      # ... 2, 3: stash the part in runs/parts (a warm machine keeps runs/)
    bash .carry/rsrun/run.sh 4 && bash .carry/rsrun/run.sh go

``go`` unpacks the site into ``/tmp/rs`` and runs ``benchmarks/ocr_throughput.py`` with ``--cli "--engine ray
--workers W"`` for W = 1, 2, 4 (``COUNT`` pages rendered from the carried ones; JSON into ``$OUT``).
Results: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from throughput_carry import WHEELS

RAY = "ray[data]==2.60.0"
DROP = ("ray/jars", "ray/rllib", "ray/llm")
PARTS = 4

RUN = r"""#!/bin/bash
# Ray on 1, 2 and 4 GPUs (issue 31), built by benchmarks/ray_carry.py. run.sh K stashes part K in runs/parts
# (kept by a warm machine); run.sh go assembles the site in /tmp/rs and measures. OUT: the call's output folder.
set -u
mkdir -p runs/parts
if [ "$1" != go ]; then
  cp .carry/rs$1/p runs/parts/$1 && ls -la runs/parts
  if [ "$1" = 1 ]; then python3 --version; which xz; nvidia-smi -L; nproc; fi
  exit 0
fi
unxz() { if which xz > /dev/null; then xz -d -T8; else python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.stdin.buffer), sys.stdout.buffer)"; fi; }
[ -f /tmp/rs/ray/__init__.py ] || { mkdir -p /tmp/rs && cat runs/parts/1 runs/parts/2 runs/parts/3 runs/parts/4 | unxz | tar x -C /tmp/rs; } || exit 1
export PYTHONPATH=$PWD:/tmp/rs PYTHONUNBUFFERED=1 VISION_CACHE=/tmp/vision-cache RAY_AUTH_MODE=disabled
python3 -c "import ray, ray.data, pyarrow, pandas, pyclipper; print(ray.__version__, pyarrow.__version__, pandas.__version__)" || exit 1
nvidia-smi -L
python3 benchmarks/ocr_throughput.py --sources /tmp/rs/pages --count ${COUNT:-1000} --skip harness,api,map,f1 \
  --cli "--engine ray --workers 1" --cli "--engine ray --workers 2" --cli "--engine ray --workers 4" \
  --timeout 170 --out $OUT/ray_gpus.json 2>&1 | tail -40
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=Path, default=REPO.parent / "shared/data/funsd_dev/images")
    parser.add_argument("--count", type=int, default=60, help="page images carried (the rendered pages' sources)")
    parser.add_argument("--dest", type=Path, default=REPO / ".carry")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheels, site = Path(tmp, "whl"), Path(tmp, "site")
        pip = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--python-version", "3.12",
               "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
               "--platform", "manylinux_2_28_x86_64", "-d", str(wheels)]
        subprocess.run([*pip, RAY, "pyarrow<21", *WHEELS], check=True)
        for wheel in sorted(wheels.glob("*.whl")):
            if not wheel.name.startswith("numpy-"):
                shutil.unpack_archive(wheel, site, format="zip")
        for part in DROP:
            shutil.rmtree(site / part, ignore_errors=True)
        libs = [p for p in site.rglob("*")
                if p.is_file() and (".so" in p.suffixes or p.parent.name in ("raylet", "gcs"))]
        subprocess.run(["strip", "--strip-unneeded", *map(str, libs)], check=False, stderr=subprocess.DEVNULL)
        (site / "pages").mkdir()
        for image in sorted(args.pages.iterdir())[: args.count]:
            shutil.copy(image, site / "pages")
        archive = Path(tmp, "site.tar.xz")
        subprocess.run(f"tar cf - -C {site} . | xz -9 -T0 > {archive}", shell=True, check=True)
        data = archive.read_bytes()
    size = -(-len(data) // PARTS)
    for k in range(PARTS):
        folder = args.dest / f"rs{k + 1}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "p").write_bytes(data[k * size:(k + 1) * size])
    run = args.dest / "rsrun"
    run.mkdir(parents=True, exist_ok=True)
    (run / "run.sh").write_text(RUN)
    print(f"{len(data) / 1e6:.1f} MB in {PARTS} parts under {args.dest}/rs1..rs{PARTS}; {run}/run.sh")


if __name__ == "__main__":
    main()
