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
