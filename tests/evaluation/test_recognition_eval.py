"""``vision eval recognition``: score definitions, crop-set reading and the CLI end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision.evaluation import recognition as ev

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from _reco_crops import render_word


def test_scores_follow_the_shared_definitions() -> None:
    s = ev.score_texts(["Total:", "abc  def", "X", ""], ["TOTAL:", "abc def", "x", "12"])
    assert s.n == 4 and s.word_accuracy == pytest.approx(3 / 4) and s.word_accuracy_cased == pytest.approx(1 / 4)
    # edits: Total:/TOTAL: 4, whitespace collapsed 0, X/x 1, ""/12 2 -> 7 over 6 + 7 + 1 + 2 = 16 characters
    assert s.errors == 7 and s.chars == 16 and s.cer == pytest.approx(7 / 16)
    with pytest.raises(ValueError):
        ev.score_texts(["a"], [])


def test_levenshtein_fallback_matches_rapidfuzz(monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = [("kitten", "sitting"), ("", "abc"), ("flaw", "lawn"), ("été", "ete"), ("same", "same")]
    fast = [ev.levenshtein(a, b) for a, b in pairs]
    monkeypatch.setitem(sys.modules, "rapidfuzz.distance", None)  # as on the GPU machine
    monkeypatch.setitem(sys.modules, "rapidfuzz", None)
    assert [ev.levenshtein(a, b) for a, b in pairs] == fast == [3, 3, 2, 2, 0]


def _crop_set(root: Path, words: list[str]) -> Path:
    (root / "images").mkdir(parents=True)
    (root / "gt").mkdir()
    ids = []
    for i, word in enumerate(words + ["(blank)"]):
        crop_id = f"c{i:03d}"
        img = render_word(word, size=22) if word != "(blank)" else np.full((20, 30, 3), 250, np.uint8)
        Image.fromarray(img).save(root / "images" / f"{crop_id}.png")
        h, w = img.shape[:2]
        gt = {"id": crop_id, "image": f"images/{crop_id}.png", "width": w, "height": h, "level": "word",
              "words": [{"text": word, "polygon": [[0, 0], [w, 0], [w, h], [0, h]], "ignore": word == "(blank)"}]}
        (root / "gt" / f"{crop_id}.json").write_text(json.dumps(gt))
        ids.append(crop_id)
    (root / "index.json").write_text(json.dumps({"set": "tiny", "kind": "crop", "level": "word", "ids": ids}))
    return root


def test_load_skips_ignored_and_rejects_page_sets(tmp_path) -> None:
    root = _crop_set(tmp_path / "set", ["Invoice", "TOTAL"])
    images, texts, ids = ev.load_crop_set(root)
    assert texts == ["Invoice", "TOTAL"] and ids == ["c000", "c001"] and images[0].shape[2] == 3
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "index.json").write_text(json.dumps({"kind": "page", "ids": []}))
    with pytest.raises(ev.VisionError):
        ev.load_crop_set(tmp_path / "pages")
    with pytest.raises(ev.VisionError):
        ev.load_crop_set(tmp_path / "missing")


def test_cli_prints_json(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from vision.app.cli import main

    root = _crop_set(tmp_path / "set", ["Invoice", "TOTAL:", "Research", "1984"])
    assert main(["eval", "recognition", "--data", str(root), "--json", "--device", "cpu"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["n"] == 4 and report["arch"] == "crnn_mobilenet_small"
    assert report["word_accuracy"] >= 0.75 and report["cer"] <= 0.1 and report["crops_per_s"] > 0
