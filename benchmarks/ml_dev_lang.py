"""Page CER on ``ml_dev`` with each page's own ``lang`` beside the default (English lexicon).

``python benchmarks/ml_dev_lang.py --data ../shared/data/ml_dev [--reco-weights FILE] [--json OUT]``

``ml_dev``'s pages come from German, French, Italian and Slovak sources; a page's language is read from its
ground truth's ``source.path`` (``german/...``, ``french/...``, ``slovak/...``; FONDUE-IT-PRINT-20 is Italian).
One OCR predictor reads every page twice, with the default lexicon and with ``with_lang(page language)``;
page CER (case-sensitive and case-insensitive) is summed over the set exactly as ``vision eval ocr`` sums it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def page_lang(gt: dict) -> str:
    """``de``, ``fr``, ``it`` or ``sk`` from an ``ml_dev`` page's ``source``."""
    src = gt.get("source", {})
    path, repo = str(src.get("path", "")).lower(), str(src.get("repo", ""))
    if "IT-PRINT" in repo or "italian" in path:
        return "it"
    for key, code in (("german", "de"), ("french", "fr"), ("slovak", "sk")):
        if key in path or key in repo.lower():
            return code
    return "default"


def main(argv: list[str] | None = None) -> int:
    from vision.evaluation.data import open_set
    from vision.evaluation.ocr import evaluate_ocr
    from vision.pipelines.ocr import ocr_predictor

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default="../shared/data/ml_dev")
    p.add_argument("--reco-weights", default="default")
    p.add_argument("--reco-arch", default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", default=None, help="write the report here too")
    args = p.parse_args(argv)
    data = open_set(args.data)
    langs: dict[str, list[str]] = {}
    for sid in data.ids:
        gt = json.loads((data.root / "gt" / f"{sid}.json").read_text())
        langs.setdefault(page_lang(gt), []).append(sid)
    base = ocr_predictor(reco_arch=args.reco_arch, reco_weights=args.reco_weights, device=args.device)
    report: dict[str, dict] = {"pages": {k: len(v) for k, v in sorted(langs.items())}}
    for mode in ("default", "lang"):
        dist = dist_ci = length = 0.0
        per = {}
        for code, ids in sorted(langs.items()):
            subset = replace(data, ids=tuple(ids))
            predictor = base.with_lang(code) if mode == "lang" and code != "default" else base
            r = evaluate_ocr(predictor, subset)
            per[code] = {"cer": r["cer"], "cer_ci": r["cer_ci"], "e2e_f1": r["end_to_end"]["0.5"]["f1"]}
            dist += r["cer_counts"]["errors"]
            dist_ci += r["cer_counts"]["errors_ci"]
            length += r["cer_counts"]["chars"]
        report[mode] = {"cer": round(dist / length, 4), "cer_ci": round(dist_ci / length, 4), "by_lang": per}
        print(mode, json.dumps(report[mode]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
