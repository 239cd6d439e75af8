"""Speed of the detector's page generators, one process (one core): pages/s and training crops/s per source.

    python benchmarks/detection_synth.py [--seconds 20] [--assets .carry/det] [--out FILE]

Sources: each scene-page kind (:mod:`vision.training.synth.scene_pages`: scene, document, overlay, empty) and
the document pages of the shipped recipe (synthetic pages and rendered PDF pages through ``make_page``), then
the whole stream of ``configs/detection/db_mobilenet_v3_large_scene.json`` (targets and crops included).
``--assets`` is the folder the config's ``.carry/det`` paths point to (fonts, words, photos, pdfpages).
Writes JSON (default ``benchmarks/results/detection_synth.json``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))


def _rate(fn, seconds: float) -> float:
    fn()  # warm caches (fonts, photos)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - t0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--assets", default=str(REPO / ".carry/det"))
    p.add_argument("--out", default=str(REPO / "benchmarks/results/detection_synth.json"))
    args = p.parse_args()
    import cv2

    from vision.training.detection import load_config
    from vision.training.detection_data import DetectionStream, PageSources, make_page

    cv2.setNumThreads(1)
    cfg = load_config(str(REPO / "configs/detection/db_mobilenet_v3_large_scene.json"))
    data = dataclasses.replace(cfg.data, **{
        k: v.replace(".carry/det", args.assets) for k, v in dataclasses.asdict(cfg.data).items()
        if isinstance(v, str)})
    sources = PageSources(data)
    rng = np.random.default_rng(0)
    rows: dict[str, float] = {}
    for kind in ("scene", "document", "overlay", "empty"):
        rows[f"scene_pages/{kind} pages/s"] = round(_rate(lambda k=kind: sources.scene(rng, k), args.seconds), 2)
    rows["document pages (recipe mix) pages/s"] = round(
        _rate(lambda: make_page(*sources(rng), rng, data), args.seconds), 2)
    stream = iter(DetectionStream(data, seed=0))
    rows["stream crops/s (config mix)"] = round(_rate(lambda: next(stream), args.seconds), 1)
    report = {"rows": rows, "crops_per_page": data.crops_per_page, "scene_share": data.scene_share,
              "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, one process",
              "load_1min": round(os.getloadavg()[0], 1)}
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
