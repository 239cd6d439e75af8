"""Table structure from word boxes: columns, wrapped cells, spans, header rows (synthetic boxes)."""

import cv2
import numpy as np

from vision.evaluation.tables import predict_table_html
from vision.evaluation.teds import teds
from vision.pipelines.ocr.table_structure import recognize_table, rule_segments, ruling_lines
from vision.structures import Block, Document, Line, Page, Word

H = 10  # text height in pixels


def _words(cells):
    """Words of ``(text, x0, y)`` phrases: 7 px per character, 4 px between the words of a phrase."""
    words, boxes = [], []
    for text, x, y in cells:
        for token in text.split():
            box = (x, y, x + 7 * len(token), y + H)
            words.append(Word(token, 0.9, tuple(v / 1000 for v in box)))
            boxes.append(box)
            x = box[2] + 4
    return words, np.array(boxes, dtype=float)


def _html(head, body):
    row = lambda r: "<tr>" + "".join(r) + "</tr>"
    return f"<table><thead>{''.join(map(row, head))}</thead><tbody>{''.join(map(row, body))}</tbody></table>"


def test_two_level_header_section_row_and_wrapped_cell():
    cells = [("Variable", 10, 10), ("Male", 210, 10), ("Female", 420, 10)]
    cells += [("%", 170, 30), ("95% CI", 240, 30), ("%", 380, 30), ("95% CI", 450, 30)]
    cells += [("Sensitivity of", 10, 50), ("39.1", 170, 50), ("31 to 47", 240, 50), ("37.5", 380, 50)]
    cells += [("the test", 10, 62), ("30 to 44", 450, 50)]  # wrapped first cell
    cells += [("Urban", 10, 82)]  # section row
    cells += [("Specificity", 10, 102), ("93.9", 170, 102), ("92 to 95", 240, 102), ("92.4", 380, 102)]
    cells += [("91 to 93", 450, 102)]
    words, boxes = _words(cells)
    table = recognize_table(words, boxes)
    table.check()
    head = [
        ['<td rowspan="2">Variable</td>', '<td colspan="2">Male</td>', '<td colspan="2">Female</td>'],
        ["<td>%</td>", "<td>95% CI</td>", "<td>%</td>", "<td>95% CI</td>"],
    ]
    body = [
        ["<td>Sensitivity of the test</td>", "<td>39.1</td>", "<td>31 to 47</td>", "<td>37.5</td>",
         "<td>30 to 44</td>"],
        ['<td colspan="5">Urban</td>'],
        ["<td>Specificity</td>", "<td>93.9</td>", "<td>92 to 95</td>", "<td>92.4</td>", "<td>91 to 93</td>"],
    ]
    assert teds(table.to_html(), _html(head, body)) == 1.0
    assert (table.n_rows, table.n_cols, table.header_rows) == (5, 5, 2)


def test_rows_split_at_rules_and_rules_set_the_header():
    image = np.full((120, 300, 3), 255, np.uint8)
    for y in (5, 25, 100):
        image[y : y + 2, 5:295] = 0
    assert np.allclose(ruling_lines(image), [5.5, 25.5, 100.5])
    cells = [("Name", 10, 10), ("Qty", 200, 10)]
    cells += [(name, 10, 30 + 13 * k) for k, name in enumerate(["apple", "pear", "plum"])]
    cells += [(str(q), 200, 30 + 13 * k) for k, q in enumerate([3, 12, 7])]
    words, boxes = _words(cells)
    table = recognize_table(words, boxes, ruling_lines(image))
    expected = _html(
        [["<td>Name</td>", "<td>Qty</td>"]],
        [["<td>apple</td>", "<td>3</td>"], ["<td>pear</td>", "<td>12</td>"], ["<td>plum</td>", "<td>7</td>"]],
    )
    assert teds(table.to_html(), expected) == 1.0


def _ruled_table(gaps=True):
    """A 3-column grid (header + 5 body rows, rows 20 px apart) and its words. With ``gaps`` the rules
    under ``North`` (top-aligned over body rows 1-2) and around ``South`` (centred over rows 3-5) stop
    short of the first column."""
    image = np.full((140, 300, 3), 255, np.uint8)
    for y in range(5, 130, 20):
        x0 = 110 if gaps and y in (45, 85, 105) else 5
        cv2.line(image, (x0, y), (295, y), (0, 0, 0), 1)
    for x in (5, 110, 210, 295):
        cv2.line(image, (x, 5), (x, 125), (0, 0, 0), 1)
    cells = [("Region", 10, 10), ("Qty", 120, 10), ("Code", 220, 10), ("North", 10, 30), ("South", 10, 90)]
    for k, (q, code) in enumerate([("3", "a1"), ("12", "b2"), ("7", "c3"), ("9", "d4"), ("5", "e5")]):
        cells += [(q, 120, 30 + 20 * k), (code, 220, 30 + 20 * k)]
    words, boxes = _words(cells)
    return image, words, boxes


def _spans_html():
    return _html(
        [["<td>Region</td>", "<td>Qty</td>", "<td>Code</td>"]],
        [
            ['<td rowspan="2">North</td>', "<td>3</td>", "<td>a1</td>"],
            ["<td>12</td>", "<td>b2</td>"],
            ['<td rowspan="3">South</td>', "<td>7</td>", "<td>c3</td>"],
            ["<td>9</td>", "<td>d4</td>"],
            ["<td>5</td>", "<td>e5</td>"],
        ],
    )


def test_a_gap_in_the_rule_under_a_cell_makes_it_span_rows():
    image, words, boxes = _ruled_table()
    rules = ruling_lines(image)
    table = recognize_table(words, boxes, rules, segments=rule_segments(image, rules))
    table.check()
    spans = {(c.row, c.col): c.row_span for c in table.cells if c.row_span > 1}
    assert spans == {(1, 0): 2, (3, 0): 3}
    assert (table.n_rows, table.n_cols, table.header_rows) == (6, 3, 1)
    assert teds(table.to_html(), _spans_html()) == 1.0


def test_the_table_evaluation_finds_row_spans_from_the_image():
    image, words, boxes = _ruled_table()
    h, w = image.shape[:2]
    for word, box in zip(words, boxes):
        word.geometry = tuple(float(v) for v in box / [w, h, w, h])
    page = Page(0, (h, w), blocks=[Block([Line(words)])])
    html = predict_table_html(image, lambda images: Document(pages=[page]))
    assert teds(html, _spans_html()) == 1.0


def test_whole_rules_and_missing_rules_keep_empty_cells():
    image, words, boxes = _ruled_table(gaps=False)
    rules = ruling_lines(image)
    ruled = recognize_table(words, boxes, rules, segments=rule_segments(image, rules))
    unruled = recognize_table(words, boxes, np.zeros(0), segments=[])
    for table in (ruled, unruled):
        table.check()
        assert all(c.row_span == 1 for c in table.cells)
        assert sum(not c.words for c in table.cells) == 3


def test_rule_segments_find_the_gap():
    image, _, _ = _ruled_table()
    rules = ruling_lines(image)
    segments = rule_segments(image, rules)
    assert len(segments) == len(rules) == 7
    gap = segments[int(np.argmin(abs(rules - 45)))]
    assert len(gap) == 1 and abs(gap[0, 0] - 110) <= 1 and abs(gap[0, 1] - 296) <= 1


def test_row_spans_survive_json_and_reach_html_and_markdown():
    image, words, boxes = _ruled_table()
    rules = ruling_lines(image)
    table = recognize_table(words, boxes, rules, segments=rule_segments(image, rules))
    page = Page(0, (140, 300), blocks=[Block([Line(words)], kind="table")], tables=[table])
    doc = Document(pages=[page])
    back = Document.from_json(doc.to_json())
    assert back == doc
    cells = back.pages[0].tables[0].cells
    assert [(c.row, c.col, c.row_span) for c in cells if c.row_span > 1] == [(1, 0, 2), (3, 0, 3)]
    html = doc.export_html()
    assert '<td rowspan="2">North</td>' in html and '<td rowspan="3">South</td>' in html
    markdown = doc.export_markdown()
    assert '<td rowspan="3">South</td>' in markdown and "|---|" not in markdown


def test_a_label_centred_between_two_rows_spans_both_but_a_section_row_does_not():
    cells = [("Region", 10, 10), ("Qty", 120, 10), ("Code", 220, 10)]
    cells += [("3", 120, 30), ("a1", 220, 30), ("North", 10, 40), ("12", 120, 50), ("b2", 220, 50)]
    cells += [("East", 10, 70), ("7", 120, 70), ("c3", 220, 70), ("9", 120, 90), ("d4", 220, 90)]
    cells += [("Urban", 10, 110), ("5", 120, 130), ("e5", 220, 130)]  # a whole pitch from each: a section row
    words, boxes = _words(cells)
    table = recognize_table(words, boxes)
    table.check()
    expected = _html(
        [["<td>Region</td>", "<td>Qty</td>", "<td>Code</td>"]],
        [
            ['<td rowspan="2">North</td>', "<td>3</td>", "<td>a1</td>"],
            ["<td>12</td>", "<td>b2</td>"],
            ["<td>East</td>", "<td>7</td>", "<td>c3</td>"],
            ["<td></td>", "<td>9</td>", "<td>d4</td>"],
            ['<td colspan="3">Urban</td>'],
            ["<td></td>", "<td>5</td>", "<td>e5</td>"],
        ],
    )
    assert teds(table.to_html(), expected) == 1.0


def test_ruling_lines_equal_a_whole_image_opening() -> None:
    """Only rows with enough ink are opened; the rules found are those of opening the whole image, runs
    touching the image's edges and rows shorter than the kernel included."""
    rng = np.random.default_rng(5)
    for _ in range(400):
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 160))
        image = np.full((h, w), 255, np.uint8)
        for _ in range(int(rng.integers(0, 12))):
            y, x0 = int(rng.integers(0, h)), int(rng.integers(-10, w))
            image[y, max(0, x0):max(0, min(w, x0 + int(rng.integers(1, w + 10))))] = 0
        image[rng.random((h, w)) < rng.random() * 0.3] = 0
        length = max(int(w * 0.3), 8)
        kernel = np.ones((1, length), np.uint8)
        opened = cv2.morphologyEx((image < 128).astype(np.uint8), cv2.MORPH_OPEN, kernel)
        rows = np.flatnonzero(opened.any(axis=1))
        groups = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1) if len(rows) else []
        np.testing.assert_array_equal(ruling_lines(image), np.array([g.mean() for g in groups]))
