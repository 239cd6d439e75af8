from vision.pipelines.ocr.block_kinds import classify_blocks
from vision.structures import Block, Line, Word


def _line(text, y, h=0.012, x=0.1):
    words = [Word(t, 0.9, (x + 0.06 * i, y, x + 0.06 * i + 0.05, y + h)) for i, t in enumerate(text.split())]
    return Line(words)


def _block(*lines):
    return Block(list(lines))


def test_kinds_from_position_size_and_text():
    body = [_line("plain running text of the body goes on here", 0.5 + 0.015 * k) for k in range(6)]
    blocks = [
        _block(_line("Journal of Things 12", 0.02)),
        _block(_line("Big Title", 0.1, h=0.03)),
        _block(_line("QUALITY IMPROVEMENT FORM", 0.2)),
        _block(_line("Date: 9/3/92 Name: Smith", 0.25)),
        _block(_line("2.1 Methods used", 0.3)),
        _block(_line("Figure 3: the setup", 0.35)),
        _block(_line("• first item", 0.4), _line("• second item", 0.415), _line("goes on", 0.43)),
        _block(*body),
        _block(_line("Page 4", 0.96)),
    ]
    out = classify_blocks(blocks)
    kinds = [b.kind for b in out]
    assert kinds == [
        "page_header", "title", "heading", "paragraph", "heading", "caption", "list_item", "list_item",
        "paragraph", "page_footer",
    ]
    assert [ln.render() for ln in out[7].lines] == ["• second item", "goes on"]


def test_a_tall_first_line_is_split_off_as_a_heading():
    body = [_line("text of the section body", 0.32 + 0.015 * k) for k in range(4)]
    block = _block(_line("Results", 0.3, h=0.016), *body)
    out = classify_blocks([block])
    assert [b.kind for b in out] == ["heading", "paragraph"] and len(out[1].lines) == 4


def test_display_formulas_are_their_own_blocks_of_kind_formula():
    from vision.pipelines.ocr.block_kinds import is_formula

    assert is_formula("f(x) = a0 + ∑k ak cos(kx) (3)".split())
    assert is_formula("E = m c 2".split()) and is_formula("α ≤ β + γ".split())
    assert not is_formula("where x = 3 and the other sizes are given".split())
    assert not is_formula("Date: 9/3/92".split()) and not is_formula("Total 12.5 (3)".split())
    text = [_line("the first paragraph of the body text goes on", 0.3 + 0.015 * k) for k in range(3)]
    formula = _line("y = a x + b (1)", 0.345, x=0.3)
    after = [_line("and the paragraph goes on after the formula", 0.36 + 0.015 * k) for k in range(2)]
    out = classify_blocks([_block(*text, formula, *after)])
    assert [b.kind for b in out] == ["paragraph", "formula", "paragraph"]
    assert out[1].render() == "y = a x + b (1)"


def test_a_caption_ends_at_its_short_last_line():
    caption = [_line("Figure 2. Sales by month in the", 0.3, x=0.1), _line("north.", 0.315, x=0.1)]
    body = [_line("plain running text of the body goes on here", 0.33 + 0.015 * k) for k in range(3)]
    out = classify_blocks([_block(*caption, *body)])
    assert [b.kind for b in out] == ["caption", "paragraph"] and len(out[0].lines) == 2
