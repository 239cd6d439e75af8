"""Reading order with column gutters, on pages drawn at test time (true word boxes, no OCR)."""

import numpy as np
import pytest

from vision.pipelines.ocr.reading_order import LayoutOptions, build_blocks
from vision.structures import Word
from vision.training.synth.structured_page import LOREM, Element, render_structured_page


def _page(columns: int, gutter_mm: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    elements = [Element("title", "Reading order of columns", span=True)]
    for i in range(3 * columns):
        elements.append(Element("heading", f"{i + 1} Section {LOREM[i]}"))
        elements.append(Element("paragraph", " ".join(rng.choice(LOREM, 50))))
    return render_structured_page(elements, columns=columns, gutter_mm=gutter_mm, footer="Page 7")


def _read(page, options=None):
    h, w = page.image.shape[:2]
    rel = page.relative_boxes()
    words = [Word(str(i), 1.0, tuple(b)) for i, b in enumerate(rel)]
    return build_blocks(words, rel * [w, h, w, h], options or LayoutOptions())


def _column(page, i: int, columns: int, gutter_mm: float = 5.0) -> int:
    """The column a word was drawn in (the renderer's frame: 20 mm margins at 150 dpi)."""
    mm = 150 / 25.4
    margin, gutter = round(20 * mm), round(gutter_mm * mm)
    width = (page.image.shape[1] - 2 * margin - (columns - 1) * gutter) // columns
    x0, _, x1, _ = page.words[i][1]
    return min(max(((x0 + x1) // 2 - margin) // (width + gutter), 0), columns - 1)


@pytest.mark.parametrize(("columns", "gutter_mm"), [(2, 5.0), (3, 5.0), (2, 8.0)])
def test_columns_are_read_one_after_the_other_and_no_line_crosses_a_gutter(columns, gutter_mm):
    page = _page(columns, gutter_mm)
    blocks = _read(page)
    order = [int(w.value) for b in blocks for ln in b.lines for w in ln.words]
    assert sorted(order) == list(range(len(page.words)))
    assert order == list(range(len(page.words)))  # the true reading order, word for word
    spanning = {i for i, (_, _, blk) in enumerate(page.words) if page.kinds[blk] in ("title", "page_footer")}
    for block in blocks:
        for line in block.lines:
            cols = {_column(page, int(w.value), columns, gutter_mm) for w in line.words if int(w.value) not in spanning}
            assert len(cols) <= 1, [page.words[int(w.value)][0] for w in line.words]


def test_without_gutter_detection_the_5mm_gutter_is_crossed():
    """The regression the gutters fix: with them off, lines run across both columns."""
    page = _page(2, 5.0)
    blocks = _read(page, LayoutOptions(gutter_width=0))
    crossing = [
        ln for b in blocks for ln in b.lines if len({_column(page, int(w.value), 2) for w in ln.words}) > 1
    ]
    assert crossing  # lines of both columns joined into one
