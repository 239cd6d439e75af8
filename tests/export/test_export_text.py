from vision.export.text import PAGE_SEPARATOR, render_document, render_page
from vision.structures import Block, Document, Line, Page, Word


def _line(*values: str) -> Line:
    return Line([Word(v, 1.0, (0.1 * i, 0.0, 0.1 * i + 0.05, 0.1)) for i, v in enumerate(values)])


def test_page_text_follows_stored_reading_order(document):
    assert render_page(document.pages[0]) == "Hello <café> a&b\"q'\nGrüße €42\n\nΩμέγα tilted"
    assert document.pages[0].render() == render_page(document.pages[0])


def test_blocks_are_separated_by_a_blank_line_and_empty_blocks_skipped():
    page = Page(
        0, (10, 10), blocks=[Block([_line("b", "a")]), Block([]), Block([_line("c"), _line("d", "e")])]
    )
    assert render_page(page) == "b a\n\nc\nd e"


def test_pages_are_separated_by_a_form_feed_line(document):
    text = render_document(document)
    assert PAGE_SEPARATOR == "\n\f\n"
    assert text.split(PAGE_SEPARATOR) == [render_page(p) for p in document.pages]
    assert text.endswith("frame") and document.render() == text


def test_empty_documents_and_pages_render_empty():
    assert render_document(Document()) == ""
    assert render_document(Document(pages=[Page(0, (5, 5)), Page(1, (5, 5))])) == "\n\f\n"
