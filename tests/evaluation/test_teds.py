import pytest

from vision.evaluation.teds import parse_table, teds

TRUE = (
    "<table><thead><tr><td>Name</td><td>Qty</td></tr></thead>"
    "<tbody><tr><td>apple</td><td>3</td></tr><tr><td>pear</td><td>12</td></tr></tbody></table>"
)


def test_identical_tables_score_one_and_inner_markup_is_ignored():
    assert teds(TRUE, TRUE) == 1.0
    assert teds(TRUE.replace("<td>Name</td>", "<td><b>Name</b></td>"), TRUE) == 1.0


def test_tree_size_counts_every_node():
    # table, thead, tbody, 3 tr, 6 td
    assert parse_table(TRUE).size() == 12


def test_one_wrong_character_costs_its_normalized_levenshtein_over_the_tree_size():
    pred = TRUE.replace("<td>pear</td>", "<td>peer</td>")
    assert teds(pred, TRUE) == pytest.approx(1 - 0.25 / 12)
    assert teds(pred, TRUE, structure_only=True) == 1.0


def test_a_missing_row_costs_its_nodes_and_a_span_mismatch_costs_one():
    pred = TRUE.replace("<tr><td>pear</td><td>12</td></tr>", "")
    assert teds(pred, TRUE, structure_only=True) == pytest.approx(1 - 3 / 12)
    spanned = TRUE.replace("<td>Name</td><td>Qty</td>", '<td colspan="2">Name Qty</td>')
    # delete one header cell (1) and rename the other to a different span (1)
    assert teds(spanned, TRUE, structure_only=True) == pytest.approx(1 - 2 / 12)


def test_html_without_a_table_is_refused():
    with pytest.raises(ValueError, match="no <table>"):
        parse_table("<p>text</p>")
