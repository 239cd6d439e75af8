"""Score a recognizer on word crops: word accuracy (case-sensitive and -insensitive), CER, crops/s.

``vision eval recognition --data ../shared/data/words_dev [--json]``. Definitions (``shared/data/README.md``):
whitespace is collapsed on both sides; word accuracy is the exact-match rate; CER is the total Levenshtein
distance divided by the total number of ground-truth characters. A page set (``--data
../shared/data/funsd_dev``) is read as one crop per ground-truth word, cut as ``words_dev`` was: a larger
sample of the same kind of crops. A set whose ``index.json`` says ``"nospace": true`` (``wildreceipt_dev``:
its transcriptions have every space removed) is scored with all whitespace removed from both sides, as its
page CER is.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from vision.evaluation.data import CropSample, open_set, read_index

__all__ = ["TASK", "RecognitionScores", "add_arguments", "levenshtein", "load_crop_set", "run", "score_texts"]

TASK = "recognition"


@dataclass(frozen=True)
class RecognitionScores:
    """Summed scores of a crop set."""

    n: int
    word_accuracy: float
    word_accuracy_cased: float
    cer: float
    errors: int
    chars: int


def levenshtein(a: str, b: str) -> int:
    """Edit distance (rapidfuzz when installed; a small pure-Python fallback for the GPU machine)."""
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:
        prev = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            cur = [i]
            for j, cb in enumerate(b, 1):
                cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
            prev = cur
        return prev[-1]
    return int(Levenshtein.distance(a, b))


def _collapse(text: str, nospace: bool = False) -> str:
    return ("" if nospace else " ").join(text.split())


def score_texts(predictions: Sequence[str], truths: Sequence[str], *,
                nospace: bool = False) -> RecognitionScores:
    """Word accuracy (both casings) and CER of ``predictions`` against ``truths`` (same order); ``nospace``:
    with all whitespace removed from both sides instead of collapsed (for transcriptions without spaces)."""
    if len(predictions) != len(truths):
        raise ValueError(f"{len(predictions)} predictions for {len(truths)} ground truths")
    exact = exact_ci = errors = chars = 0
    for p, t in zip(predictions, truths):
        p, t = _collapse(p, nospace), _collapse(t, nospace)
        exact += p == t
        exact_ci += p.casefold() == t.casefold()
        errors += levenshtein(p, t)
        chars += len(t)
    n = max(len(truths), 1)
    return RecognitionScores(len(truths), exact_ci / n, exact / n, errors / max(chars, 1), errors, chars)


def load_crop_set(folder: str | Path, limit: int | None = None,
                  margin: int = 2) -> tuple[list[np.ndarray], list[str], list[str]]:
    """Read a set as crops, their texts and ids (``limit``: the first N crops of a crop set, or pages).

    A ``kind: crop`` set is read as it is; crops with no text left once ``ignore`` words are dropped are
    skipped (they count for nothing). A ``kind: page`` set is cut into one crop per ground-truth word (or
    line, on line-level sets): its axis-aligned box grown by ``margin`` pixels and clipped to the page, the
    way ``words_dev`` was cut from ``funsd_dev`` (box + 2 px). Ignored and empty words are skipped.
    """
    crops = open_set(folder, limit=limit)
    images, texts, ids = [], [], []
    for sample in crops:
        if isinstance(sample, CropSample):
            if sample.text:
                images.append(sample.load_image())
                texts.append(sample.text)
                ids.append(sample.id)
            continue
        page = sample.load_image()
        h, w = page.shape[:2]
        for i, word in enumerate(sample.words):
            if word.ignore or not word.text.strip():
                continue
            x0, y0, x1, y1 = word.box
            x0, y0 = max(0, int(np.floor(x0)) - margin), max(0, int(np.floor(y0)) - margin)
            x1, y1 = min(w, int(np.ceil(x1)) + margin), min(h, int(np.ceil(y1)) + margin)
            if x1 - x0 < 2 or y1 - y0 < 2:  # a degenerate box (or one off the page) holds no readable crop
                continue
            images.append(np.ascontiguousarray(page[y0:y1, x0:x1]))
            texts.append(word.text)
            ids.append(f"{sample.id}_w{i:03d}")
    return images, texts, ids


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """CLI options of ``vision eval recognition``."""
    parser.add_argument("--data", required=True, help="crop set folder (e.g. ../shared/data/words_dev), or a "
                        "page set, read as one crop per ground-truth word or line (box + 2 px)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--arch", default=None, help="registered recognition model (default: the default one)")
    parser.add_argument("--weights", default="default", help='"default", a safetensors path, or "none"')
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when available)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--limit", type=int, default=None,
                        help="score only the first N crops (pages of a page set)")
    parser.add_argument("--errors", type=int, default=0, help="also print the first N misread crops")
    parser.add_argument("--lexicon", default="en", help='lexicon-aware decoding: a bundled lexicon ("en", the '
                        'predictor\'s default) or "none" for plain greedy CTC decoding')
    parser.add_argument("--no-slanted", dest="slanted", action="store_false",
                        help="read each crop once: no sheared second readings of unsure slanted words "
                        "(vision.predictors.recognition.tilt)")


def run(args: argparse.Namespace) -> int:
    """Load the set, run the predictor, print the scores; returns the process exit code."""
    from vision.predictors.recognition.predictor import recognition_predictor

    images, truths, ids = load_crop_set(args.data, args.limit)
    weights = None if str(args.weights).lower() == "none" else args.weights
    lexicon = None if str(args.lexicon).lower() == "none" else args.lexicon
    predictor = recognition_predictor(args.arch, weights=weights, device=args.device, batch_size=args.batch_size,
                                      lexicon=lexicon, slanted=args.slanted)
    predictor(images[:64])  # warm-up (thread pools, allocator) kept out of the timing
    start = time.perf_counter()
    results = predictor(images)
    elapsed = time.perf_counter() - start
    nospace = bool(read_index(args.data).get("nospace", False))
    scores = score_texts([t for t, _ in results], truths, nospace=nospace)
    report = {"set": str(args.data), "arch": predictor.arch, "weights": str(args.weights), "lexicon": lexicon,
              "slanted": args.slanted, "device": str(predictor.device), "nospace": nospace, **asdict(scores),
              "crops_per_s": len(images) / max(elapsed, 1e-9)}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{'set':<22}{'n':>6}{'word acc':>10}{'(cased)':>9}{'CER':>8}{'crops/s':>10}")
        print(f"{Path(args.data).name:<22}{scores.n:>6}{scores.word_accuracy:>10.2%}"
              f"{scores.word_accuracy_cased:>9.2%}{scores.cer:>8.2%}{report['crops_per_s']:>10.0f}")
    shown = 0
    for (pred, conf), truth, crop_id in zip(results, truths, ids):
        if shown >= args.errors:
            break
        if _collapse(pred, nospace).casefold() != _collapse(truth, nospace).casefold():
            print(f"{crop_id}\t{truth!r}\t{pred!r}\t{conf:.2f}")
            shown += 1
    return 0
