"""Figures: found on the page image by the structure stage, placed in reading order before their caption,
and carried into JSON, Markdown, HTML, hOCR and ALTO."""

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.pipelines.ocr.reading_order import build_blocks
from vision.pipelines.ocr.structure import StructureOptions, StructureStage
from vision.structures import Document, Page, Word

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _figure_page():
    """A page of text with a bar chart between two paragraphs and a caption under the chart."""
    img = Image.new("RGB", (1000, 1300), "white")
    draw = ImageDraw.Draw(img)
    try:
        font = ImageFont.truetype(FONT, 22)
    except OSError:
        font = ImageFont.load_default(22)
    words = []

    def text(x, y, line):
        for token in line.split():
            box = draw.textbbox((x, y), token, font=font)
            draw.text((x, y), token, fill="black", font=font)
            words.append((token, box))
            x = box[2] + 8

    for k in range(5):
        text(100, 100 + 32 * k, "plain running text of the first paragraph goes on here")
    for k in range(6):  # the chart: six bars on an axis
        draw.rectangle([140 + 110 * k, 720 - 60 * (k + 1), 220 + 110 * k, 720], fill=(40 + 30 * k, 90, 160))
    draw.line([120, 720, 820, 720], fill="black", width=3)
    text(100, 750, "Figure 1. Sales by month in the north.")
    for k in range(4):
        text(100, 820 + 32 * k, "more running text of the second paragraph after it")
    image = np.asarray(img)
    h, w = image.shape[:2]
    objs = [Word(t, 0.9, (b[0] / w, b[1] / h, b[2] / w, b[3] / h)) for t, b in words]
    boxes = np.array([b for _, b in words], dtype=np.float64)
    return Page(0, (h, w), build_blocks(objs, boxes), image=image)


def test_figure_found_and_placed_before_its_caption_in_every_export():
    page = StructureStage()([_figure_page()])[0]
    kinds = [b.kind for b in page.blocks]
    assert kinds == ["paragraph", "figure", "caption", "paragraph"], kinds
    fig = page.blocks[1]
    assert not fig.lines and [r.kind for r in page.regions] == ["figure"] and fig.geometry == page.regions[0].geometry
    x0, y0, x1, y1 = fig.geometry
    assert 0.1 < x0 < 0.16 and 0.26 < y0 < 0.3 and 0.8 < x1 < 0.85 and 0.54 < y1 < 0.57

    doc = Document([page])
    md = doc.export_markdown()
    assert "![Figure 1. Sales by month in the north.](#figure-1-1)" in md
    assert md.index("first paragraph") < md.index("![Figure 1.") < md.index("second paragraph")
    html = doc.export_html()
    assert '<figure id="figure-1-1"' in html and "<figcaption>Figure 1. Sales by month in the north.</figcaption></figure>" in html
    assert html.count("Figure 1. Sales") == 1  # the caption is written once, inside the figure
    hocr = doc.export_hocr()
    assert 'class="ocr_image"' in hocr and 'data-kind="figure"' in hocr
    assert hocr.index(">first<") < hocr.index("class=\"ocr_image\"") < hocr.index(">Sales<")
    assert 'TYPE="figure"' in doc.export_alto()
    back = Document.from_json(doc.to_json())
    assert [b.kind for b in back.pages[0].blocks] == kinds and back.pages[0].blocks[1].geometry == fig.geometry


def test_figures_can_be_switched_off_and_text_pages_get_none():
    page = StructureStage(StructureOptions(figures=False))([_figure_page()])[0]
    assert "figure" not in [b.kind for b in page.blocks] and not page.regions
    text_only = _figure_page()
    text_only.image = np.full_like(text_only.image, 255)
    assert "figure" not in [b.kind for b in StructureStage()([text_only])[0].blocks]


def test_the_ocr_pipeline_finds_the_figure_and_writes_it_before_its_caption():
    import re

    import vision

    ocr = vision.ocr_predictor(device="cpu")
    doc = ocr([_figure_page().image])
    page = doc.pages[0]
    assert [r.kind for r in page.regions] == ["figure"]
    kinds = [b.kind for b in page.blocks]
    assert kinds.index("figure") == kinds.index("caption") - 1
    md = doc.export_markdown()
    assert re.search(r"^!\[Figure 1\. .*\]\(#figure-1-1\)$", md, re.MULTILINE), md
    assert md.index("first paragraph") < md.index("](#figure-1-1)") < md.index("second paragraph")
