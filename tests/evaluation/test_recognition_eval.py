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


def test_nospace_scores_remove_all_whitespace() -> None:
    """For transcriptions without spaces (``"nospace": true`` sets) a reading's spaces cost nothing."""
    preds, truths = ["TOTAL 248.60", "7% GST", "Tax 1.0"], ["TOTAL248.60", "7%GST", "Tax:1.0"]
    s = ev.score_texts(preds, truths, nospace=True)
    assert s.n == 3 and s.word_accuracy == pytest.approx(2 / 3) and s.errors == 1 and s.chars == 11 + 5 + 7
    collapsed = ev.score_texts(preds, truths)
    assert collapsed.word_accuracy == 0 and collapsed.errors == 1 + 1 + 1


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


def test_load_skips_ignored_crops(tmp_path) -> None:
    root = _crop_set(tmp_path / "set", ["Invoice", "TOTAL"])
    images, texts, ids = ev.load_crop_set(root)
    assert texts == ["Invoice", "TOTAL"] and ids == ["c000", "c001"] and images[0].shape[2] == 3


def _box(x0: int, y0: int, x1: int, y1: int) -> list[list[int]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def test_page_sets_are_cut_into_word_crops(tmp_path) -> None:
    """Each kept ground-truth word becomes its box + 2 px, clipped to the page; ignored, empty and degenerate
    boxes are skipped."""
    root = tmp_path / "pages"
    (root / "images").mkdir(parents=True)
    (root / "gt").mkdir()
    page = np.full((120, 200, 3), 255, np.uint8)
    word = render_word("TOTAL", size=22)
    h, w = word.shape[:2]
    page[40:40 + h, 30:30 + w] = word
    Image.fromarray(page).save(root / "images" / "p0.png")
    words = [{"text": "TOTAL", "polygon": _box(30, 40, 30 + w, 40 + h), "ignore": False},
             {"text": "", "polygon": _box(0, 0, 20, 20), "ignore": False},
             {"text": "x", "polygon": _box(100, 10, 120, 30), "ignore": True},
             {"text": "edge", "polygon": _box(190, 100, 205, 125), "ignore": False},
             {"text": "off", "polygon": _box(300, 300, 320, 320), "ignore": False}]
    gt = {"id": "p0", "image": "images/p0.png", "width": 200, "height": 120, "level": "word", "words": words}
    (root / "gt" / "p0.json").write_text(json.dumps(gt))
    index = {"set": "pages", "kind": "page", "level": "word", "ids": ["p0"]}
    (root / "index.json").write_text(json.dumps(index))
    images, texts, ids = ev.load_crop_set(root)
    assert texts == ["TOTAL", "edge"] and ids == ["p0_w000", "p0_w003"]
    np.testing.assert_array_equal(images[0], page[38:42 + h, 28:32 + w])
    assert images[1].shape == (120 - 98, 200 - 188, 3)  # clipped to the page


def test_cli_scores_nospace_sets_without_whitespace(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from vision.app.cli import main

    root = _crop_set(tmp_path / "set", ["TOTAL", "Invoice"])
    index = json.loads((root / "index.json").read_text())
    (root / "index.json").write_text(json.dumps({**index, "nospace": True}))
    gt = json.loads((root / "gt" / "c000.json").read_text())
    gt["words"][0]["text"] = "T O T A L"  # the spaced-out truth scores as "TOTAL"
    (root / "gt" / "c000.json").write_text(json.dumps(gt))
    assert main(["eval", "recognition", "--data", str(root), "--json", "--device", "cpu"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["nospace"] is True and report["chars"] == len("TOTAL") + len("Invoice")
    assert report["word_accuracy"] == 1.0


def test_cli_prints_json(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from vision.app.cli import main

    root = _crop_set(tmp_path / "set", ["Invoice", "TOTAL:", "Research", "1984"])
    assert main(["eval", "recognition", "--data", str(root), "--json", "--device", "cpu"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["n"] == 4 and report["arch"] == "crnn_mobilenet_small"
    assert report["word_accuracy"] >= 0.75 and report["cer"] <= 0.1 and report["crops_per_s"] > 0
