"""Markdown of real OCR output: the bundled sample page, and a form-like page drawn at test time."""

import re
from importlib import resources

import numpy as np
import pytest
from PIL import Image

import vision
from vision.pipelines.ocr.structure import StructureOptions
from vision.training.synth.structured_page import Element, render_structured_page


@pytest.fixture(scope="module")
def ocr():
    return vision.ocr_predictor(device="cpu")


def test_sample_page_markdown_has_a_title_a_table_and_paragraphs_in_order(ocr):
    with resources.as_file(resources.files("vision.assets") / "sample_page.png") as path:
        image = np.asarray(Image.open(path).convert("RGB"))
    doc = ocr([image])
    md = doc.export_markdown()
    assert md.startswith("# Northwind Archive Services")
    assert re.search(r"^\| Code \| Description \| Qty \| Amount \|$", md, re.MULTILINE)
    assert re.search(r"^\| A-1042 \| Archival storage boxes, acid free \| 24 \| 91.20 \|$", md, re.MULTILINE)
    assert md.index("Thank you") < md.index("Payment is due") < md.index("Sincerely")
    assert "Tax ID" not in md  # the page footer is dropped
    assert doc.pages[0].tables and "Tax ID" in doc.render()  # ...but kept in the plain text


def test_form_page_markdown_and_switching_structure_off(ocr):
    rows = [
        ["Date", "Brand", "Units", "Price"],
        ["03/12/91", "Winston", "1200", "14.10"],
        ["04/02/91", "Salem", "800", "12.75"],
        ["05/19/91", "Camel", "450", "13.20"],
    ]
    page = render_structured_page(
        [
            Element("title", "SALES REPORT", span=True),
            Element("paragraph", "The figures below cover the spring quarter for the southern region."),
            Element("table", rows=rows),
            Element("paragraph", "Please return this form to the regional office before the end of May."),
        ],
        columns=1,
        font_pt=14,
        footer="Form 22-B",
    )
    md = ocr([page.image]).export_markdown()
    assert md.startswith("# SALES REPORT")
    assert re.search(r"^\| Date \| Brand \| Units \| Price \|$", md, re.MULTILINE)
    assert re.search(r"^\| 04/02/91 \| Salem \| 800 \| 12.75 \|$", md, re.MULTILINE)
    assert md.index("spring quarter") < md.index("| Date") < md.index("regional office")
    assert "Form 22-B" not in md
    plain = vision.ocr_predictor(
        det_predictor=ocr.pipeline["detect"].predictor,
        reco_predictor=ocr.pipeline["recognize"].predictor,
        structure=StructureOptions(kinds=False, tables=False, figures=False),
    )
    assert "structure" not in plain.pipeline.names
    doc = plain([page.image])
    assert doc.pages[0].tables == [] and {b.kind for b in doc.pages[0].blocks} == {"paragraph"}
