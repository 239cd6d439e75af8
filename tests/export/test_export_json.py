import json

import numpy as np
import pytest

from vision.export.json import SCHEMA_VERSION, document_from_dict, dumps, export_document, loads
from vision.structures import Block, Document, Line, Page, Word


def test_round_trip_is_exact(document):
    data = document.export()
    back = Document.from_dict(data)
    assert back == document
    assert back.pages[1].blocks[0].lines[0].words[0].confidence == 0.1 + 0.2  # not rounded to 0.3
    assert back.pages[1].blocks[0].lines[0].words[0].geometry[0] == 1 / 3
    mask = back.pages[0].regions[0].mask
    assert mask is not None and mask.dtype == bool
    np.testing.assert_array_equal(mask, document.pages[0].regions[0].mask)
    assert (
        back.pages[0].blocks[2].lines[0].words[1].polygon
        == document.pages[0].blocks[2].lines[0].words[1].polygon
    )
    assert back.pages[1].timestamp == 3.5 and back.timeline == document.timeline


def test_round_trip_through_json_text(document):
    text = document.to_json(indent=2)
    assert "Grüße" in text  # UTF-8 text, not \\u escapes
    assert Document.from_json(text) == document
    assert loads(text.encode()) == document
    assert dumps(Document.from_json(text)) == dumps(document)


def test_dict_is_versioned_json_and_leaves_images_out(document):
    data = export_document(document)
    assert data["schema_version"] == SCHEMA_VERSION == 1
    assert "image" not in data["pages"][0]
    assert json.loads(json.dumps(data)) == data
    assert Document.from_dict(data).pages[0].image is None
    rle = data["pages"][0]["regions"][0]["mask"]
    assert rle["shape"] == [120, 160] and sum(rle["counts"]) == 120 * 160 and len(rle["counts"]) < 100


def test_numpy_scalars_export_as_plain_floats():
    word = Word("x", np.float32(0.25), tuple(np.float32(v) for v in (0.1, 0.2, 0.3, 0.4)))
    doc = Document(pages=[Page(np.int64(0), (np.int64(10), np.int64(20)), blocks=[Block([Line([word])])])])
    data = json.loads(dumps(doc))
    assert data["pages"][0]["blocks"][0]["lines"][0]["words"][0]["geometry"][0] == float(np.float32(0.1))
    assert data["pages"][0]["dimensions"] == [10, 20]


def test_nan_is_refused_by_strict_json(document):
    document.pages[0].blocks[0].lines[0].words[0].confidence = float("nan")
    with pytest.raises(ValueError):
        dumps(document)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("schema_version"), "missing key 'schema_version'"),
        (lambda d: d.update(schema_version=2), "unsupported schema_version 2"),
        (lambda d: d.pop("pages"), "missing key 'pages'"),
        (
            lambda d: d["pages"][0]["blocks"][0]["lines"][1]["words"][0].pop("value"),
            "pages[0].blocks[0].lines[1]",
        ),
        (lambda d: d["pages"][0].update(dimensions=[1]), "pages[0].dimensions"),
        (lambda d: d["pages"][0]["blocks"][0].update(geometry=[0, 0, 1]), "pages[0].blocks[0].geometry"),
        (lambda d: d["pages"][1].update(page_idx=True), "pages[1].page_idx: expected an integer"),
        (lambda d: d["pages"][0]["regions"][0]["mask"]["counts"].append(5), "pages[0].regions[0].mask"),
        (lambda d: d["timeline"][0].update(start="0"), "timeline[0].start: expected a number"),
        (lambda d: d.update(timeline={}), "timeline: expected a list"),
        (lambda d: d["pages"][0]["blocks"][0].update(geometry=[0, float("nan"), 1, 1]),
         "pages[0].blocks[0].geometry: expected a finite number"),
        (lambda d: d["pages"][0]["blocks"][0]["lines"][0]["words"][0].update(
            outline=[[0, 0], [1, 0], [1, float("inf")]]),
         "pages[0].blocks[0].lines[0].words[0].outline: expected a finite number"),
    ],
)
def test_bad_input_raises_clear_value_errors(document, mutate, message):
    data = export_document(document)
    mutate(data)
    with pytest.raises(ValueError) as info:
        document_from_dict(data)
    assert message in str(info.value)


def test_non_object_input_is_rejected():
    with pytest.raises(ValueError, match="expected an object"):
        document_from_dict([])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        loads("{not json")
