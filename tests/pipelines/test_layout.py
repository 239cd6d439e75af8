import numpy as np
import pytest

from vision.pipelines.ocr.reading_order import (
    LayoutOptions,
    build_blocks,
    find_regions,
    group_blocks,
    group_lines,
    order_blocks,
)
from vision.structures import Word


def _line(y: float, x0: float, n: int, *, h: float = 20, w: float = 60, gap: float = 12, drift: float = 0):
    """Pixel boxes of ``n`` words on one text line starting at ``(x0, y)``; ``drift`` px per word."""
    return [(x0 + i * (w + gap), y + i * drift, x0 + i * (w + gap) + w, y + i * drift + h) for i in range(n)]


def _words(boxes, size=(1000, 1000)):
    h, w = size
    return [Word(f"w{i}", 0.9, (b[0] / w, b[1] / h, b[2] / w, b[3] / h)) for i, b in enumerate(boxes)]


def test_lines_group_rows_left_to_right():
    boxes = _line(100, 50, 4) + _line(130, 50, 3)
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(boxes))
    lines = group_lines(np.array(boxes)[perm])
    assert [[int(perm[i]) for i in ln] for ln in lines] == [[0, 1, 2, 3], [4, 5, 6]]


def test_a_skewed_line_stays_one_line():
    boxes = _line(100, 50, 8, drift=4)  # ~3.2 degrees: the last word sits 28 px (1.4 heights) lower
    assert group_lines(np.array(boxes)) == [list(range(8))]


def test_a_wide_gap_splits_a_row():
    boxes = _line(100, 50, 2) + _line(100, 400, 2)  # gutter of 218 px = 11 heights
    assert group_lines(np.array(boxes)) == [[0, 1], [2, 3]]
    assert group_lines(np.array(boxes), LayoutOptions(word_gap=20)) == [[0, 1, 2, 3]]


def test_blocks_chain_close_lines_and_keep_titles_apart():
    lines = np.array(
        [
            [50, 40, 600, 90],  # title, 50 px high
            [50, 110, 700, 130],
            [50, 140, 690, 160],
            [50, 170, 300, 190],  # short last line of the paragraph
            [50, 260, 700, 280],  # next paragraph, after a 3.5-height gap
        ],
        dtype=float,
    )
    assert group_blocks(lines) == [[0], [1, 2, 3], [4]]


def test_two_columns_read_column_by_column_even_with_aligned_gaps():
    boxes = []
    for x0 in (50, 550):  # two columns of two 3-line paragraphs, paragraph gaps at the same height
        for top in (100, 300):
            for k in range(3):
                boxes += _line(top + 30 * k, x0, 5, w=70)
    boxes += _line(30, 50, 6, h=40, w=120)  # full-width title
    words = _words(boxes)
    blocks = build_blocks(words, np.array(boxes))
    assert [len(b.lines) for b in blocks] == [1, 3, 3, 3, 3]
    first_words = [b.lines[0].words[0].value for b in blocks]
    assert first_words == ["w60", "w0", "w15", "w30", "w45"]  # title, left column, right column


def test_form_rows_read_label_then_value():
    boxes = []
    for row in range(4):
        boxes += _line(100 + 60 * row, 50, 1, w=90)  # label
        boxes += _line(100 + 60 * row, 600, 1, w=150)  # value, far to the right
    blocks = build_blocks(_words(boxes), np.array(boxes))
    text = " ".join(w.value for b in blocks for ln in b.lines for w in ln.words)
    assert text == "w0 w1 w2 w3 w4 w5 w6 w7"


def test_order_blocks_without_any_cut_falls_back_to_top_left():
    boxes = np.array([[0, 0, 100, 100], [50, 50, 150, 150], [20, 20, 60, 200]], dtype=float)
    assert order_blocks(boxes, np.array([1, 1, 1])) == [0, 2, 1]


def test_build_blocks_geometry_is_the_union_of_words():
    boxes = _line(100, 50, 3) + _line(125, 50, 2)
    blocks = build_blocks(_words(boxes), np.array(boxes))
    assert len(blocks) == 1 and [len(ln.words) for ln in blocks[0].lines] == [3, 2]
    np.testing.assert_allclose(blocks[0].geometry, (0.05, 0.1, 0.254, 0.145))
    assert build_blocks([], np.zeros((0, 4))) == []


def test_regions_find_a_figure_but_not_text_or_rules():
    page = np.full((800, 600, 3), 250, np.uint8)
    page[100:300, 80:330] = (30, 90, 160)  # a photo-like block
    page[500:502, 40:560] = 0  # a rule
    page[600:602, 40:560] = 0
    page[500:602, 40:42] = 0  # a ruled table frame
    page[500:602, 558:560] = 0
    text_boxes = []
    for k in range(5):
        y = 360 + 25 * k
        page[y : y + 14, 60:540:9] = 0  # dark strokes of text
        text_boxes.append((50 / 600, (y - 2) / 800, 550 / 600, (y + 16) / 800))
    regions = find_regions(page, np.array(text_boxes))
    assert len(regions) == 1 and regions[0].kind == "figure"
    np.testing.assert_allclose(regions[0].geometry, (80 / 600, 100 / 800, 330 / 600, 300 / 800), atol=0.02)
    assert (
        find_regions(
            page[330:480],
            np.array([(b[0], (b[1] * 800 - 330) / 150, b[2], (b[3] * 800 - 330) / 150) for b in text_boxes]),
        )
        == []
    )


@pytest.mark.parametrize("size", [(800, 600), (803, 605), (1651, 1275), (7, 5)])
def test_regions_are_placed_on_the_page_whatever_its_size(size):
    """Pages whose sides are not multiples of the 8-px blocks: the figure is found where it lies (within a
    block), and a page smaller than a block has none."""
    h, w = size
    page = np.full((h, w, 3), 250, np.uint8)
    if h < 64:
        assert find_regions(page, np.zeros((0, 4))) == []
        return
    y0, y1, x0, x1 = h // 2, h - 3, w // 3, w - 2  # down to the last rows and columns
    page[y0:y1, x0:x1] = (30, 90, 160)
    page[h // 8 : h // 8 + 14, 40 : w - 40 : 9] = 0  # text strokes
    text = np.array([(30 / w, (h // 8 - 2) / h, (w - 30) / w, (h // 8 + 16) / h)])
    regions = find_regions(page, text)
    assert len(regions) == 1
    np.testing.assert_allclose(regions[0].geometry, (x0 / w, y0 / h, x1 / w, y1 / h), atol=9 / min(h, w))


def test_table_rows_read_across_and_become_one_line_each():
    boxes = []
    for row in range(4):  # tight rows: descriptions alone would chain into a column block
        y = 100 + 30 * row
        boxes += (
            _line(y, 50, 1, w=70) + _line(y, 160, 4, w=60) + _line(y, 600, 1, w=30) + _line(y, 800, 1, w=60)
        )
    blocks = build_blocks(_words(boxes), np.array(boxes))
    lines = [ln for b in blocks for ln in b.lines]
    assert [[w.value for w in ln.words] for ln in lines] == [
        [f"w{7 * r + k}" for k in range(7)] for r in range(4)
    ]


def test_tabular_lines_are_short_lines_with_close_neighbours():
    from vision.pipelines.ocr.reading_order import tabular_lines

    lines = np.array(
        [
            [50, 100, 120, 120],
            [170, 100, 500, 120],  # code beside a description
            [50, 200, 500, 220],
            [700, 200, 1100, 220],  # two long column lines
            [50, 300, 120, 320],
            [900, 300, 960, 320],
        ],
        dtype=float,
    )  # short lines 39 heights apart
    words = np.array([1, 4, 6, 6, 1, 1])
    assert tabular_lines(lines, words).tolist() == [True, True, False, False, False, False]


def test_shaded_boxes_holding_words_are_not_figures():
    page = np.full((800, 600, 3), 250, np.uint8)
    page[100:300, 80:500] = 200  # a grey-shaded table cell area
    boxes = []
    for k in range(6):
        y = 120 + 30 * k
        page[y : y + 14, 100:480:9] = 0
        boxes.append((95 / 600, (y - 2) / 800, 485 / 600, (y + 16) / 800))
    assert find_regions(page, np.array(boxes)) == []
    assert len(find_regions(page, np.zeros((0, 4)))) == 1  # without its words it is a dark area


def test_an_equation_number_joins_its_formula_line_and_text_keeps_its_block():
    text = [b for k in range(3) for b in _line(100 + 30 * k, 50, 8)]  # a paragraph, 50..626 px wide
    formula = [(200, 190, 230, 210), (240, 190, 260, 210), (270, 190, 300, 210)]  # "y = x" centred
    number = [(580, 190, 620, 210)]  # "(1)" at the right edge, far from the formula
    after = [b for k in range(2) for b in _line(220 + 30 * k, 50, 8)]
    boxes = text + formula + number + after
    words = _words(boxes)
    for wd, t in zip(words[24:28], ["y", "=", "x", "(1)"]):
        wd.value = t
    blocks = build_blocks(words, np.array(boxes, dtype=np.float64))
    lines = [ln.render() for b in blocks for ln in b.lines]
    assert "y = x (1)" in lines


def _rows(blocks) -> list[str]:
    return [" ".join(w.value for w in ln.words) for b in blocks for ln in b.lines]


def test_amounts_far_right_of_their_items_read_row_by_row():
    # a receipt: "2 Kadhai Paneer ... 34.00", prices 25 heights right of their items, rows 1.5 heights apart
    items = [["2", "VS", "Kebab"], ["2", "Kadhai", "Paneer"], ["4", "R", "Roti"], ["1", "LP", "Plain"]]
    prices = ["30.00", "34.00", "24.00", "6.00"]
    boxes, texts = [], []
    for r, (item, price) in enumerate(zip(items, prices)):
        for k, word in enumerate(item):
            boxes.append((40 + 80 * k, 100 + 30 * r, 40 + 80 * k + 60, 120 + 30 * r))
            texts.append(word)
        boxes.append((800, 100 + 30 * r, 870, 120 + 30 * r))
        texts.append(price)
    words = [Word(t, 0.9, tuple(v / 1000 for v in box)) for t, box in zip(texts, boxes)]
    rows = _rows(build_blocks(words, np.array(boxes)))
    assert rows == [" ".join(item + [price]) for item, price in zip(items, prices)]
    # without the amounts' reach (amount_gap 0, or words instead of amounts): two columns, as before
    off = build_blocks(words, np.array(boxes), LayoutOptions(amount_gap=0))
    assert _rows(off)[: len(items)] == [" ".join(item) for item in items]
    words = [Word("x" if t in prices else t, 0.9, w.geometry) for t, w in zip(texts, words)]
    flat = _rows(build_blocks(words, np.array(boxes)))
    assert flat[: len(items)] == [" ".join(item) for item in items]
