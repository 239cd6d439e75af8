"""The turned-word rule on synthetic crops: the recognizer's default against the same without
:func:`~vision.predictors.recognition.turn.reread_turned_ink`, same run.

    python benchmarks/turned_words.py [--n 600] [--bank .carry/reco] [--glyph-aspect 1.0]

Renders the six sets of ``benchmarks/slanted_words.py`` (never evaluation data) and ``turned_native``: scene
words at camera resolution, every one rotated by up to 90 degrees either way (``p_steep`` 1,
``steep_degrees`` 90; seed 7013), cut along their axis-aligned box as ICDAR 2015's crops are. Each set is
read by the shipped recognizer with ``slanted=True`` (the photo path and ``vision eval recognition``) twice:
with the shear of :mod:`~vision.predictors.recognition.tilt` only, and with the turned second readings too
(the default). Prints case-insensitive word accuracy per set and writes
``benchmarks/results/turned_words.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.append(str(REPO))

from benchmarks import slanted_words  # noqa: E402

slanted_words.SETS["turned_native"] = ("scene", 7013, {"p_steep": 1.0, "steep_degrees": 90.0}, True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=600, help="crops per set")
    ap.add_argument("--bank", type=Path, default=REPO / ".carry/reco", help="fonts/, words/ and photos/")
    ap.add_argument("--glyph-aspect", type=float, default=None, help="override turn.GLYPH_ASPECT")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks/results/turned_words.json")
    args = ap.parse_args()
    from vision import recognition_predictor
    from vision.predictors.recognition import predictor as module
    from vision.predictors.recognition import turn

    if args.glyph_aspect is not None:
        turn.GLYPH_ASPECT = args.glyph_aspect
    reader = recognition_predictor(device="cpu")
    rows = {}
    for name in slanted_words.SETS:
        pairs = slanted_words.render(name, args.n, args.bank)
        crops, texts = [np.ascontiguousarray(c) for c, _ in pairs], [t for _, t in pairs]
        row = {}
        for variant in ("shear_only", "turned"):
            module.reread_turned_ink = turn.reread_turned_ink if variant == "turned" else (lambda r, c, res: res)
            start = time.perf_counter()
            got = reader(crops)
            row[f"{variant}_s"] = round(time.perf_counter() - start, 2)
            row[variant] = round(100 * float(np.mean([g.lower() == t.lower() for (g, _), t in zip(got, texts)])), 2)
        module.reread_turned_ink = turn.reread_turned_ink
        rows[name] = row
        print(name, row, flush=True)
    out = {"machine": platform.node(), "n": args.n, "glyph_aspect": turn.GLYPH_ASPECT,
           "min_angle": turn.MIN_ANGLE, "sets": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
