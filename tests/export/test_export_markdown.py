from vision.structures import Block, Document, Line, Page, Table, TableCell, Word


def _block(text, kind="paragraph", y=0.1):
    words = [Word(t, 0.9, (0.1 + 0.05 * i, y, 0.14 + 0.05 * i, y + 0.02)) for i, t in enumerate(text.split())]
    return Block([Line(words)], kind=kind)


def _table(span=False):
    w = lambda t: [Word(t, 0.9, (0.1, 0.5, 0.2, 0.52))]
    if span:
        cells = [TableCell(0, 0, w("Both"), col_span=2, header=True)]
    else:
        cells = [TableCell(0, 0, w("Item"), header=True), TableCell(0, 1, w("Qty|n"), header=True)]
    cells += [TableCell(1, 0, w("apple")), TableCell(1, 1, w("3"))]
    return Table((0.1, 0.5, 0.3, 0.6), 2, 2, cells, header_rows=1)


def _doc(span=False):
    blocks = [
        _block("Running head", "page_header", 0.01),
        _block("Annual report", "title"),
        _block("1 Results", "heading"),
        _block("Sales grew *a lot*."),
        _block("• first point", "list_item"),
        _block("• second point", "list_item"),
        _block("Item Qty", "table"),
        _block("Figure 1: sales", "caption"),
        _block("Page 4", "page_footer", 0.97),
    ]
    return Document(pages=[Page(0, (100, 100), blocks=blocks, tables=[_table(span)])])


def test_markdown_has_headings_paragraphs_lists_and_a_pipe_table_without_running_heads():
    md = _doc().export_markdown()
    assert md == (
        "# Annual report\n\n## 1 Results\n\nSales grew \\*a lot\\*.\n\n- first point\n- second point\n\n"
        "| Item | Qty\\|n |\n|---|---|\n| apple | 3 |\n\n*Figure 1: sales*\n"
    )


def test_a_spanning_cell_makes_the_markdown_table_html():
    md = _doc(span=True).export_markdown()
    assert '<table><thead><tr><td colspan="2">Both</td></tr></thead>' in md
    assert "|---|" not in md


def test_html_export_is_a_document_with_the_same_structure():
    html = _doc(span=True).export_html()
    assert html.startswith("<!DOCTYPE html>")
    for part in ("<h1>Annual report</h1>", "<h2>1 Results</h2>", "<li>first point</li>", 'colspan="2"'):
        assert part in html
    assert "Running head" not in html and "Page 4" not in html
    assert "Sales grew *a lot*." in html  # no Markdown escapes in HTML


def test_hocr_and_alto_carry_the_block_kinds():
    from pathlib import Path

    from lxml import etree

    doc = _doc()
    hocr = etree.fromstring(doc.export_hocr().encode())
    areas = hocr.findall(".//{*}div[@data-kind]")
    assert [a.get("data-kind") for a in areas] == [b.kind for b in doc.pages[0].blocks]
    assert [a.get("class") for a in areas][:2] == ["ocr_header", "ocr_carea"]
    assert areas[-1].get("class") == "ocr_footer"
    alto = etree.fromstring(doc.export_alto().encode())
    schema = etree.XMLSchema(etree.parse(str(Path(__file__).with_name("alto-4-2-subset.xsd"))))
    schema.assertValid(alto)
    labels = {t.get("ID"): t.get("LABEL") for t in alto.findall(".//{*}LayoutTag")}
    assert [labels[b.get("TAGREFS")] for b in alto.findall(".//{*}TextBlock")] == [
        b.kind for b in doc.pages[0].blocks
    ]
