"""Money amounts as row cells (vision.pipelines.ocr.cells): what counts as an amount, and its reach."""

import numpy as np
import pytest

from vision.pipelines.ocr.cells import is_amount, tabular_lines
from vision.pipelines.ocr.reading_order import LayoutOptions


@pytest.mark.parametrize("words", [["30.00"], ["$49.30"], ["£769.93"], ["4", "907.90"], ["12.00", "A"],
                                   ["1,234.56"], ["-3,99€"], ["RM9.80"], ["12.50%"], ["(5.00)"]])
def test_prices_are_amounts(words):
    assert is_amount(words)


@pytest.mark.parametrize("words", [[], ["2018"], ["(3)"], ["[12]"], ["3.14159"], ["1.5"], ["Fig.", "3"],
                                   ["p.", "12"], ["A"], ["12.00", "tax"]])
def test_years_citations_and_numbers_are_not(words):
    assert not is_amount(words)


def test_an_amount_reaches_across_its_row():
    lines = np.array([[50, 100, 400, 120], [1150, 100, 1220, 120]], dtype=float)  # 37.5 heights apart
    words = np.array([3, 1])
    assert tabular_lines(lines, words).tolist() == [False, False]
    price = np.array([False, True])
    assert tabular_lines(lines, words, amounts=price).tolist() == [True, True]
    assert tabular_lines(lines, words, LayoutOptions(amount_gap=30), amounts=price).tolist() == [False, False]
    # the amount must be the short line: a long line ending in an amount has no reach
    assert tabular_lines(lines, np.array([3, 3]), amounts=np.array([True, True])).tolist() == [False, False]
