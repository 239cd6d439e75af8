"""Tilted straight-box pages: the detector's word directions give the page's skew, and the layout reads the
boxes level, so rows stay rows (a receipt's item and its price) while the words keep their measured boxes."""

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

import vision
from vision.pipelines.ocr.reading_order import LayoutOptions
from vision.pipelines.ocr.skew import SkewOptions, page_skew

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
ROWS = [("COFFEE", "12.50"), ("BREAD", "3.25"), ("CHEESE", "8.90"), ("APPLES", "4.10"), ("BUTTER", "2.75"),
        ("HONEY", "6.40"), ("SUGAR", "1.95"), ("TOTAL", "39.85")]


def _boxes(n: int, width: float = 60.0) -> np.ndarray:
    x = np.arange(n, dtype=np.float64) * 10
    return np.stack([x, x, x + width, x + 10], axis=1)


def test_agreeing_words_give_their_median_direction():
    angles = np.r_[np.full(9, 5.0), 5.5, np.nan, np.nan]  # glyphs (NaN) carry no direction
    assert page_skew(angles, _boxes(12)) == pytest.approx(5.0)
    assert page_skew(-angles, _boxes(12)) == pytest.approx(-5.0)


def test_level_few_or_disagreeing_pages_are_level():
    assert page_skew(np.full(12, 0.6), _boxes(12)) == 0.0  # under min_angle: the line linking follows it
    assert page_skew(np.full(5, 6.0), _boxes(5)) == 0.0  # too few words to tell
    scattered = np.linspace(-30, 30, 20)  # a scene: text at many angles
    assert page_skew(scattered, _boxes(20)) == 0.0
    assert page_skew(None, _boxes(3)) == 0.0
    assert page_skew(np.full(4, 6.0), _boxes(12)) == 0.0  # directions that do not match the boxes
    strict = SkewOptions(min_agreement=0.95)
    mostly = np.r_[np.full(9, 4.0), np.full(3, -10.0)]
    assert page_skew(mostly, _boxes(12)) == pytest.approx(4.0)
    assert page_skew(mostly, _boxes(12), strict) == 0.0


def _receipt(angle: float) -> np.ndarray:
    """Items on the left, prices on the right, 5-8 text heights apart, the slip turned by ``angle``."""
    page = Image.new("RGB", (620, 560), "white")
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(FONT, 30)
    for k, (item, price) in enumerate(ROWS):
        y = 40 + 60 * k
        draw.text((80, y), item, font=font, fill="black")
        draw.text((540 - draw.textlength(price, font=font), y), price, font=font, fill="black")
    h, w = page.height, page.width
    m = cv2.getRotationMatrix2D((w / 2, h / 2), -angle, 1.0)  # clockwise: rows run down to the right
    return cv2.warpAffine(np.asarray(page), m, (w, h), borderValue=(255, 255, 255))


@pytest.fixture(scope="module")
def predictor():
    return vision.ocr_predictor(device="cpu")


def _rows(doc) -> list[str]:
    return [" ".join(w.value for w in line.words) for block in doc.pages[0].blocks for line in block.lines]


def test_a_tilted_receipt_reads_row_by_row(predictor):
    image = _receipt(5.0)
    doc = predictor([image])
    assert _rows(doc) == [f"{item} {price}" for item, price in ROWS]
    # the layout without the skew (LayoutOptions(level_lines=False)) pairs items with other rows' prices
    level = vision.ocr_predictor(device="cpu", layout=LayoutOptions(level_lines=False))([image])
    assert sorted(w.geometry for w in level.pages[0].words) == sorted(w.geometry for w in doc.pages[0].words)
    assert _rows(level) != _rows(doc)


def test_a_level_receipt_is_unchanged(predictor):
    doc = predictor([_receipt(0.0)])
    assert _rows(doc) == [f"{item} {price}" for item, price in ROWS]


def test_figures_are_looked_for_on_the_words_as_they_lie(predictor, monkeypatch):
    # the layout groups levelled boxes, but figure regions are found on the image: the words' own hulls
    from vision.pipelines.ocr import stages

    seen = []
    real = stages.find_regions
    monkeypatch.setattr(stages, "find_regions", lambda image, boxes, options: seen.append(boxes) or real(
        image, boxes, options))
    doc = predictor([_receipt(8.0)])
    words = np.array([w.geometry for w in doc.pages[0].words])
    assert len(seen) == 1 and len(words) >= 2 * len(ROWS) - 1
    hull = np.r_[seen[0][:, :2].min(axis=0), seen[0][:, 2:].max(axis=0)]
    np.testing.assert_allclose(hull, np.r_[words[:, :2].min(axis=0), words[:, 2:].max(axis=0)], atol=0.01)
    assert doc.pages[0].regions == []
