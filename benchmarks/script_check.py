"""How often the script flag fires on real Latin pages and crops, and whether it fires on foreign ones.

``python benchmarks/script_check.py --data ../shared/data/funsd_dev ../shared/data/ml_dev ../shared/data/words_dev``

Page sets: every ground-truth word (or line) box of a page is cut and classified, and the page rule of
:func:`vision.predictors.recognition.script.flag_scripts` is applied: counts of flagged pages and of words whose
confidence would be lowered. Crop sets: the share of crops read as another script. ``--ocr SET...`` reads
page sets end to end with ``ocr_predictor`` (the pipeline's own rule, readings and lexicon) and counts the pages
that get a warning; ``--render`` adds pages drawn with DejaVu in Cyrillic, Greek and Latin, as written and in
capitals (the test's pages).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    from vision.evaluation.data import open_set
    from vision.models.recognition.script import SCRIPTS
    from vision.predictors.recognition.script import WORD_P, flag_scripts, load_script_classifier

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", nargs="*", default=[])
    p.add_argument("--render", action="store_true")
    p.add_argument("--ocr", nargs="*", default=[], help="page sets read end to end: pages that get a warning")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    clf = load_script_classifier()
    report: dict[str, dict] = {}
    for root in args.data:
        data = open_set(root)
        if data.kind == "crop":
            crops = [s.load_image() for s in data]
            probs = clf(crops)
            foreign = probs[:, 1:].max(1) >= WORD_P
            named = Counter(SCRIPTS[int(i) + 1] for i in probs[foreign, 1:].argmax(1))
            report[data.name] = {"crops": len(crops), "flagged": int(foreign.sum()), "as": dict(named)}
        else:
            pages = flagged_words = words = 0
            scripts: Counter[str] = Counter()
            for s in data:
                img = s.load_image()
                crops, texts = [], []
                for w in s.words:
                    if w.ignore or not w.text.strip():
                        continue
                    pts = np.asarray(w.polygon)
                    x0, y0 = np.floor(pts.min(0)).astype(int).clip(0)
                    x1, y1 = np.ceil(pts.max(0)).astype(int)
                    if x1 - x0 >= 2 and y1 - y0 >= 2:
                        crops.append(img[y0:y1, x0:x1])
                        texts.append((w.text, 1.0))
                out, script = flag_scripts(crops, texts, clf)
                words += len(out)
                flagged_words += sum(c < 1.0 for _, c in out)
                if script:
                    pages += 1
                    scripts[script] += 1
            report[data.name] = {"pages": len(data), "flagged_pages": pages, "as": dict(scripts),
                                 "words": words, "flagged_words": flagged_words}
        print(data.name, json.dumps(report[data.name]), flush=True)
    if args.ocr:
        import vision

        ocr = vision.ocr_predictor(device="cpu")
        for root in args.ocr:
            data = open_set(root)
            warned: Counter[str] = Counter()
            for s in data:
                (pg,) = ocr([s.load_image()]).pages
                for w in pg.warnings:
                    warned[w.split(" script")[0].removeprefix("text in ")] += 1
            report[f"ocr_{data.name}"] = {"pages": len(data), "warned_pages": sum(warned.values()), "as": warned}
            print(f"ocr {data.name}", json.dumps(report[f"ocr_{data.name}"]), flush=True)
    if args.render:
        import vision
        from tests.pipelines.test_script_flag import TEXTS, page

        ocr = vision.ocr_predictor(device="cpu")
        for (script, lines), capitals in ((item, caps) for item in TEXTS.items() for caps in (False, True)):
            (pg,) = ocr([page([t.upper() for t in lines] if capitals else lines)]).pages
            conf = [w.confidence for w in pg.words if len(w.value) >= 3]
            name = f"rendered_{script}" + ("_capitals" if capitals else "")
            report[name] = {"warnings": pg.warnings, "median_confidence": float(np.median(conf)),
                            "text": " | ".join(w.value for w in pg.words)}
            print(name, json.dumps(report[name], ensure_ascii=False), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
