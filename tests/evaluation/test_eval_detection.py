"""The evaluation-set reader and ``vision eval detection`` on a small page set made in the test."""

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from vision.errors import CorruptFile, UnsupportedFormat
from vision.evaluation import detection
from vision.evaluation.data import CropSample, PageSample, open_set

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _write_set(root: Path, kind: str = "page", level: str = "word") -> Path:
    """Two pages of printed words with padded word boxes (and one ignore region) in the README layout."""
    font = ImageFont.truetype(FONT, 24)
    (root / "images").mkdir(parents=True)
    (root / "gt").mkdir()
    ids = []
    for i, words in enumerate([["Total", "amount", "12.50"], ["Date:", "05/01/2024", "Signature"]]):
        sid = f"p{i}"
        page = Image.new("L", (700, 260), 255)
        draw = ImageDraw.Draw(page)
        x, items = 30, []
        for w in words:
            draw.text((x, 100), w, font=font, fill=0, anchor="ls")
            x0, y0, x1, y1 = draw.textbbox((x, 100), w, font=font, anchor="ls")
            items.append(
                {
                    "text": w,
                    "polygon": [[x0 - 2, y0 - 2], [x1 + 2, y0 - 2], [x1 + 2, y1 + 2], [x0 - 2, y1 + 2]],
                    "ignore": False,
                }
            )
            x = x1 + 15
        draw.rectangle([30, 180, 120, 220], outline=0)
        items.append({"text": "", "polygon": [[30, 180], [120, 180], [120, 220], [30, 220]], "ignore": True})
        page.save(root / "images" / f"{sid}.png")
        gt = {
            "id": sid,
            "image": f"images/{sid}.png",
            "width": 700,
            "height": 260,
            "level": level,
            "source": {},
            "words": items,
        }
        (root / "gt" / f"{sid}.json").write_text(json.dumps(gt))
        ids.append(sid)
    (root / "index.json").write_text(json.dumps({"set": root.name, "kind": kind, "level": level, "ids": ids}))
    return root


def test_open_set_reads_typed_samples(tmp_path):
    s = open_set(_write_set(tmp_path / "pages"))
    assert (s.name, s.kind, s.level, len(s)) == ("pages", "page", "word", 2)
    page = s[0]
    assert isinstance(page, PageSample) and len(page.words) == 4 and page.words[-1].ignore
    assert page.load_image().shape == (260, 700, 3)
    np.testing.assert_allclose(page.words[0].box[:2], page.words[0].polygon.min(axis=0))
    assert len(open_set(tmp_path / "pages", limit=1)) == 1
    crops = open_set(_write_set(tmp_path / "crops", kind="crop"))
    assert isinstance(crops[1], CropSample) and crops[1].text == "Date: 05/01/2024 Signature"


def test_open_set_errors(tmp_path):
    with pytest.raises(UnsupportedFormat):
        open_set(tmp_path)
    root = _write_set(tmp_path / "bad")
    (root / "gt" / "p0.json").write_text("{not json")
    with pytest.raises(CorruptFile):
        open_set(root)[0]


def test_eval_detection_cli_task(tmp_path, capsys):
    root = _write_set(tmp_path / "set")
    parser = argparse.ArgumentParser()
    detection.add_arguments(parser)
    args = parser.parse_args(["--data", str(root), "--json", "--device", "cpu"])
    assert detection.TASK == "detection" and detection.run(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pages"] == 2 and set(report["iou"]) == {"0.5", "0.3"}
    scores = report["iou"]["0.5"]
    assert scores["n_gt"] == 6  # ignore regions count for nothing
    assert scores["f1"] >= 0.8  # clean printed words with the padded-box convention
    assert report["pages_per_s"] > 0
    args = parser.parse_args(["--data", str(root), "--device", "cpu", "--iou", "0.7", "--limit", "1"])
    assert detection.run(args) == 0
    text = capsys.readouterr().out
    assert "1 pages" in text and "IoU>=0.7" in text and "IoU>=0.3" in text


def test_crop_sets_are_rejected_for_detection(tmp_path):
    root = _write_set(tmp_path / "crops", kind="crop")
    with pytest.raises(ValueError):
        detection.evaluate_detection(lambda pages: [], open_set(root))
