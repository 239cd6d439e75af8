"""``vision eval tables`` plumbing on a table set written at test time, with a stand-in OCR predictor."""

import json

import pytest
from PIL import Image

from vision.errors import UnsupportedFormat
from vision.evaluation.tables import evaluate_tables
from vision.structures import Block, Document, Line, Page, Word

ROWS = [("Name", "Qty"), ("apple", "3"), ("pear", "12")]
HTML = (
    "<html><body><table><thead><tr><td><b>Name</b></td><td><b>Qty</b></td></tr></thead><tbody>"
    "<tr><td>apple</td><td>3</td></tr><tr><td>pear</td><td>12</td></tr></tbody></table></body></html>"
)


def _set(root, html=HTML):
    (root / "images").mkdir(parents=True)
    (root / "gt").mkdir()
    Image.new("RGB", (200, 100), "white").save(root / "images" / "t1.png")
    (root / "gt" / "t1.json").write_text(json.dumps({"id": "t1", "image": "images/t1.png", "html": html}))
    (root / "index.json").write_text(json.dumps({"set": "tiny", "kind": "table", "ids": ["t1"]}))


def _reader(misread=None):
    """Pages -> a Document holding the table's words at fixed places (relative boxes)."""

    def predict(images):
        words = []
        for r, row in enumerate(ROWS):
            for c, text in enumerate(row):
                y, x = 0.1 + 0.25 * r, 0.05 + 0.5 * c
                words.append(Word((misread or {}).get(text, text), 0.9, (x, y, x + 0.02 * len(text), y + 0.1)))
        return Document(pages=[Page(0, images[0].shape[:2], blocks=[Block([Line(words)])])])

    return predict


def test_a_perfect_reading_scores_one_and_a_misread_cell_loses_its_share(tmp_path):
    _set(tmp_path)
    report = evaluate_tables(_reader(), tmp_path, scale=1.0)
    assert (report["tables"], report["teds"], report["teds_struct"]) == (1, 1.0, 1.0)
    worse = evaluate_tables(_reader({"pear": "peer"}), tmp_path, scale=1.0)
    assert worse["teds_struct"] == 1.0
    assert worse["teds"] == pytest.approx(1 - 0.25 / 12, abs=1e-4)  # 12 nodes; 1 of 4 letters wrong


def test_a_page_set_is_refused(tmp_path):
    (tmp_path / "index.json").write_text(json.dumps({"set": "p", "kind": "page", "ids": []}))
    with pytest.raises(UnsupportedFormat, match="needs a table set"):
        evaluate_tables(_reader(), tmp_path)
