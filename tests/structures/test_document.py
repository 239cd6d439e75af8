import numpy as np

from vision.structures import Block, Document, Line, Page, Region, TimelineEntry, Word


def _word(value: str, x: float) -> Word:
    return Word(value, 0.9, (x, 0.1, x + 0.1, 0.2))


def test_lines_and_blocks_default_to_the_union_of_their_children():
    line1 = Line([_word("a", 0.1), _word("b", 0.4)])
    line2 = Line([Word("c", 1.0, (0.0, 0.3, 0.2, 0.5))])
    assert line1.geometry == (0.1, 0.1, 0.5, 0.2)
    assert Block([line1, line2, Line([])]).geometry == (0.0, 0.1, 0.5, 0.5)
    assert Line([]).geometry is None and Block([Line([])]).geometry is None and Block([]).geometry is None
    assert Line([_word("a", 0.1)], geometry=(0, 0, 1, 1)).geometry == (0, 0, 1, 1)


def test_words_in_reading_order_and_render():
    page = Page(
        0,
        (10, 10),
        blocks=[Block([Line([_word("a", 0.5), _word("b", 0.1)])]), Block([Line([_word("c", 0)])])],
    )
    doc = Document(pages=[page, Page(1, (10, 10), blocks=[Block([Line([_word("d", 0)])])])])
    assert [w.value for w in page.words] == ["a", "b", "c"]
    assert [w.value for w in doc.words()] == ["a", "b", "c", "d"]
    assert page.blocks[0].render() == "a b" and doc.render() == "a b\n\nc\n\f\nd"


def test_region_equality_compares_masks_by_content():
    mask = np.eye(4, dtype=bool)
    region = Region("mask", (0, 0, 1, 1), mask=mask)
    assert region == Region("mask", (0, 0, 1, 1), mask=mask.copy())
    assert region != Region("mask", (0, 0, 1, 1), mask=~mask)
    assert region != Region("mask", (0, 0, 1, 1))
    assert Region("figure", (0, 0, 1, 1)) == Region("figure", (0, 0, 1, 1))
    assert region != Region("figure", (0, 0, 1, 1), mask=mask)


def test_page_images_are_not_compared_or_exported():
    image = np.zeros((10, 10, 3), np.uint8)
    assert Page(0, (10, 10), image=image) == Page(0, (10, 10))
    assert "image" not in Document(pages=[Page(0, (10, 10), image=image)]).export()["pages"][0]


def test_json_round_trip_through_document_methods():
    doc = Document(
        pages=[Page(2, (30, 40), blocks=[Block([Line([_word("ü", 0.3)])])], timestamp=1.25, source="v.mp4")],
        timeline=[TimelineEntry("ü", 1.0, 2.0, 0.5, (0.1, 0.2, 0.3, 0.4))],
        source="v.mp4",
    )
    assert Document.from_json(doc.to_json()) == doc
    assert Document.from_dict(doc.export()) == doc
