"""Table sets drawn by headless Chromium: truth HTML, structure tokens, the set layout of tables_dev."""

import json
import shutil

import numpy as np
import pytest
from PIL import Image

from vision.evaluation.teds import parse_table, teds
from vision.training.synth.html_tables import CHROMIUM, random_table, write_table_set


def test_random_tables_are_valid_grids_with_spans_and_headers():
    rng = np.random.default_rng(0)
    specs = [random_table(rng) for _ in range(40)]
    assert any("colspan" in s.truth_html() for s in specs) and any("rowspan" in s.truth_html() for s in specs)
    assert {s.style["rules"] for s in specs} == {"grid", "booktabs", "none", "shaded"}
    for s in specs:
        assert teds(s.truth_html(), s.truth_html()) == 1.0 and s.header >= 1
        tokens = s.structure_tokens()
        assert sum(t in ("<td>", "<td") for t in tokens) == sum(len(r) for r in s.rows)
        tree = parse_table(s.truth_html())
        assert [p.tag for p in tree.children] == ["thead", "tbody"] and len(tree.children[0].children) == s.header


@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Chromium")
def test_a_drawn_set_has_the_layout_vision_eval_tables_reads(tmp_path):
    root = write_table_set(tmp_path / "t", 2, seed=3)
    index = json.loads((root / "index.json").read_text())
    assert index["kind"] == "table" and len(index["ids"]) == 2
    gt = json.loads((root / "gt" / f"{index['ids'][0]}.json").read_text())
    image = np.asarray(Image.open(root / gt["image"]))
    assert image.shape[0] > 50 and image.shape[1] > 100 and image.min() < 100  # the table is drawn
    boxes = [c["bbox"] for c in gt["cells"] if "bbox" in c]
    assert boxes and all(0 <= b[0] < b[2] <= image.shape[1] and 0 <= b[1] < b[3] <= image.shape[0] for b in boxes)


def test_valign_sets_the_text_place_without_changing_the_tables():
    from vision.training.synth.html_tables import _page_html

    top = [random_table(np.random.default_rng(5)) for _ in range(3)]
    spec = random_table(np.random.default_rng(5))
    spec.style["valign"] = "middle"
    assert spec.rows == top[0].rows and "vertical-align:middle" in _page_html(spec)
    assert "vertical-align:top" in _page_html(top[0]) and "valign" not in top[0].style
