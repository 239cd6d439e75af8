"""Tables: TEDS and structure-only TEDS of table structure recognition run on the OCR output.

Each image of a table set (``index.json`` with ``"kind": "table"``; ``gt/<id>.json`` holding the true
``html``) is read by the OCR predictor; :func:`~vision.pipelines.ocr.table_structure.recognize_table` builds the
table from the words and the image's ruling lines, and its HTML is scored against the truth with
:func:`~vision.evaluation.teds.teds`, averaged over tables. ``--scale`` enlarges the images first (table
crops of articles are small: PubTabNet's text is about 9 px high).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.errors import CorruptFile, UnsupportedFormat
from vision.evaluation.data import read_index
from vision.evaluation.teds import teds
from vision.pipelines.ocr.options import add_model_arguments, options_from_args
from vision.pipelines.ocr.table_structure import recognize_table, rule_segments, ruling_lines
from vision.structures import Document

__all__ = ["TASK", "add_arguments", "evaluate_tables", "predict_table_html", "run"]

TASK = "tables"


def _load_set(root: Path, limit: int | None) -> list[dict[str, Any]]:
    index = root / "index.json"
    meta = read_index(root)
    if meta.get("kind") != "table":
        raise UnsupportedFormat(str(index), f"a {meta.get('kind')!r} set; vision eval tables needs a table set")
    ids = meta["ids"][:limit] if limit else meta["ids"]
    return [json.loads((root / "gt" / f"{i}.json").read_text()) for i in ids]


def predict_table_html(image: np.ndarray, predict: Callable[[list[np.ndarray]], Document]) -> str:
    """OCR ``image`` (``uint8[H, W, 3]``, the whole image is the table) and return its table's HTML."""
    page = predict([image]).pages[0]
    words = page.words
    h, w = image.shape[:2]
    boxes = np.array([wd.geometry for wd in words], dtype=np.float64).reshape(-1, 4) * [w, h, w, h]
    rules = ruling_lines(image)
    return recognize_table(words, boxes, rules, segments=rule_segments(image, rules)).to_html()


def evaluate_tables(
    predict: Callable[[list[np.ndarray]], Document], root: str | Path, *, scale: float = 2.0, limit: int | None = None
) -> dict[str, Any]:
    """Mean TEDS and structure-only TEDS over a table set, with per-table scores and seconds."""
    root = Path(root)
    samples = _load_set(root, limit)
    rows, seconds = [], 0.0
    for gt in samples:
        bgr = cv2.imread(str(root / gt["image"]), cv2.IMREAD_COLOR)
        if bgr is None:
            raise CorruptFile(str(root / gt["image"]), "unreadable image")
        image = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        if scale != 1.0:
            image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
        t0 = time.perf_counter()
        html = predict_table_html(image, predict)
        seconds += time.perf_counter() - t0
        rows.append(
            {"id": gt["id"], "teds": teds(html, gt["html"]), "teds_struct": teds(html, gt["html"], structure_only=True)}
        )
    n = len(rows)
    return {
        "set": root.name,
        "tables": n,
        "scale": scale,
        "seconds": round(seconds, 3),
        "teds": round(sum(r["teds"] for r in rows) / n, 4) if n else None,
        "teds_struct": round(sum(r["teds_struct"] for r in rows) / n, 4) if n else None,
        "per_table": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``vision eval tables``."""
    parser.add_argument("--data", required=True, help="a table set folder (holding index.json)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N tables")
    parser.add_argument("--scale", type=float, default=2.0, help="enlarge the images by this factor first (2)")
    add_model_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Score table recognition on ``--data`` and print the scores (or JSON with ``--json``)."""
    from vision.pipelines.ocr.predictor import ocr_predictor

    predictor = ocr_predictor(options=options_from_args(args))
    report = evaluate_tables(predictor, args.data, scale=args.scale, limit=args.limit)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['set']}: {report['tables']} tables, TEDS {report['teds']}, structure-only TEDS "
          f"{report['teds_struct']} ({report['seconds']} s)")
    return 0
