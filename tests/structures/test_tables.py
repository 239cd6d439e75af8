import pytest

from vision.export.json import document_from_dict, export_document
from vision.structures import Block, Document, Line, Page, Table, TableCell, Word


def _word(text, x):
    return Word(text, 0.9, (x, 0.1, x + 0.05, 0.12))


def _doc():
    cells = [
        TableCell(0, 0, [_word("Name", 0.1)], col_span=2, header=True),
        TableCell(1, 0, [_word("apple", 0.1)]),
        TableCell(1, 1, []),
    ]
    table = Table((0.1, 0.1, 0.3, 0.2), 2, 2, cells, header_rows=1)
    blocks = [Block([Line([_word("Fruit", 0.1)])], kind="heading"), Block([Line([_word("Name", 0.1)])], kind="table")]
    return Document(pages=[Page(0, (100, 200), blocks=blocks, tables=[table])])


def test_tables_and_kinds_round_trip_through_json():
    doc = _doc()
    back = document_from_dict(export_document(doc))
    assert back == doc
    assert back.pages[0].blocks[0].kind == "heading" and back.pages[0].tables[0].cells[0].col_span == 2


def test_documents_without_kinds_or_tables_still_load():
    data = export_document(_doc())
    del data["pages"][0]["tables"]
    del data["pages"][0]["blocks"][0]["kind"]
    back = document_from_dict(data)
    assert back.pages[0].tables == [] and back.pages[0].blocks[0].kind == "paragraph"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["pages"][0]["blocks"][0].update(kind="poem"), "unknown block kind 'poem'"),
        (lambda d: d["pages"][0]["tables"][0]["cells"].pop(), "covered by no cell"),
        (lambda d: d["pages"][0]["tables"][0]["cells"][1].update(col=1), "covered twice"),
        (lambda d: d["pages"][0]["tables"][0]["cells"][0].update(header="yes"), "expected true or false"),
    ],
)
def test_bad_tables_raise_clear_value_errors(mutate, message):
    data = export_document(_doc())
    mutate(data)
    with pytest.raises(ValueError, match=message):
        document_from_dict(data)
