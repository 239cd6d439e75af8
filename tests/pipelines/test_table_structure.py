"""Table structure from word boxes: columns, wrapped cells, spans, header rows (synthetic boxes)."""

import numpy as np

from vision.evaluation.teds import teds
from vision.pipelines.ocr.table_structure import recognize_table, ruling_lines
from vision.structures import Word

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
