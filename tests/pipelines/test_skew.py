"""Tilted straight-box pages: the detector's word directions give the page's skew, and the layout reads the
boxes level, so rows stay rows (a receipt's item and its price) while the words keep their measured boxes."""

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

import vision
from vision.pipelines.ocr.reading_order import LayoutOptions
from vision.pipelines.ocr.skew import SkewOptions, level_boxes, level_map, word_quads

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
SIZE = (480, 640)
ROWS = [("COFFEE", "12.50"), ("BREAD", "3.25"), ("CHEESE", "8.90"), ("APPLES", "4.10"), ("BUTTER", "2.75"),
        ("HONEY", "6.40"), ("SUGAR", "1.95"), ("TOTAL", "39.85")]


def _boxes(n: int, width: float = 60.0) -> np.ndarray:
    x = 20 + (np.arange(n, dtype=np.float64) % 4) * 100
    y = 20 + (np.arange(n, dtype=np.float64) // 4) * 30
    return np.stack([x, y, x + width, y + 12], axis=1)


def _turn(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    p = np.c_[points, np.ones(len(points))] @ matrix.T
    return p[:, :2] / p[:, 2:]


def test_agreeing_words_give_a_rotation():
    angles = np.r_[np.full(9, 5.0), 5.5, np.nan, np.nan]  # glyphs (NaN) carry no direction
    m = level_map(angles, _boxes(12), SIZE)
    assert m is not None
    np.testing.assert_allclose(m[2], [0, 0, 1], atol=1e-12)  # affine: a rotation
    assert np.degrees(np.arctan2(m[1, 0], m[0, 0])) == pytest.approx(-5.0)
    run = _turn(m, np.array([[0.0, 0.0], [np.cos(np.radians(5)), np.sin(np.radians(5))]]))
    assert run[1, 1] - run[0, 1] == pytest.approx(0.0, abs=1e-9)  # a line at 5 degrees runs level
    m = level_map(-angles, _boxes(12), SIZE)
    assert np.degrees(np.arctan2(m[1, 0], m[0, 0])) == pytest.approx(5.0)


def test_level_few_or_disagreeing_pages_get_no_map():
    assert level_map(np.full(12, 0.6), _boxes(12), SIZE) is None  # under min_angle: the line linking follows
    assert level_map(np.full(5, 6.0), _boxes(5), SIZE) is None  # too few words to tell
    rng = np.random.default_rng(0)
    assert level_map(rng.uniform(-30, 30, 20), _boxes(20), SIZE) is None  # a scene: text at many angles
    assert level_map(None, _boxes(3), SIZE) is None
    assert level_map(np.full(4, 6.0), _boxes(12), SIZE) is None  # directions that do not match the boxes
    mostly = np.r_[np.full(9, 4.0), np.full(3, -10.0)]
    assert level_map(mostly, _boxes(12), SIZE) is not None
    assert level_map(mostly, _boxes(12), SIZE, SkewOptions(min_agreement=0.95)) is None


def test_converging_lines_get_a_perspective_map():
    # rows of a page photographed from below its right edge: every line runs towards (1400, 240)
    point = np.array([1400.0, 240.0])
    boxes = _boxes(24)
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    angles = np.degrees(np.arctan2(point[1] - centres[:, 1], point[0] - centres[:, 0]))
    assert np.ptp(angles) > 6  # no single direction fits them (within 2 degrees)
    m = level_map(angles, boxes, SIZE)
    assert m is not None and abs(m[2, 0]) + abs(m[2, 1]) > 0  # projective
    for c, a in zip(centres, angles):  # each word's line, mapped, runs level
        t = np.radians(a)
        step = 40 * np.r_[np.cos(t), np.sin(t)]
        ends = _turn(m, np.array([c - step, c + step]))
        assert abs(np.degrees(np.arctan2(*(ends[1] - ends[0])[::-1]))) < 0.01
    # boxes keep their order along a line and their rows apart
    quads = np.stack([boxes[:, [0, 1]], boxes[:, [2, 1]], boxes[:, [2, 3]], boxes[:, [0, 3]]], axis=1)
    levelled = level_boxes(quads, m)
    assert np.all(np.diff(levelled[:4, 0]) > 0)


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


def _photographed_receipt() -> np.ndarray:
    """The level receipt seen at an angle: its right edge further away (shorter), its rows converging."""
    page = _receipt(0.0)
    h, w = page.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[30, 10], [w - 40, 90], [w - 50, h - 60], [20, h - 5]])
    matrix = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(page, matrix, (w, h), borderValue=(255, 255, 255))


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


def test_a_receipt_photographed_at_an_angle_reads_row_by_row(predictor):
    image = _photographed_receipt()
    assert _rows(predictor([image])) == [f"{item} {price}" for item, price in ROWS]
    level = vision.ocr_predictor(device="cpu", layout=LayoutOptions(level_lines=False))([image])
    assert _rows(level) != [f"{item} {price}" for item, price in ROWS]


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


@pytest.mark.parametrize("angle", [-14.0, -4.0, 6.0, 20.0])
def test_straight_boxes_of_tilted_words_give_back_the_words(angle):
    # words 40-300 px long and 24 px high, turned by `angle` about the page centre: their axis-aligned boxes
    # are as tall as they are long; under the page's rotation map they give back 24-px-high rectangles
    h, w = SIZE
    lengths = np.array([40.0, 90.0, 150.0, 300.0])
    flat = np.stack([np.full(4, 100.0), 100 + 60 * np.arange(4.0), 100 + lengths, 124 + 60 * np.arange(4.0)], 1)
    corners = flat[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 4, 2)
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), -angle, 1.0)
    turned = corners @ turn[:, :2].T + turn[:, 2]
    hulls = np.concatenate([turned.min(1), turned.max(1)], axis=1)
    m = level_map(np.full(12, angle), np.tile(hulls, (3, 1)), SIZE)
    quads = word_quads(hulls, m)
    np.testing.assert_allclose(quads, turned, atol=1e-6)
    level = level_boxes(quads, m)
    np.testing.assert_allclose(level[:, 3] - level[:, 1], 24.0, atol=1e-6)
    np.testing.assert_allclose(level[:, 2] - level[:, 0], lengths, atol=1e-6)
    # a mark whose box does not solve at that angle keeps its corners
    square = np.array([[300.0, 300.0, 302.0, 360.0]])  # a thin vertical bar: no word at that angle
    np.testing.assert_allclose(word_quads(square, m)[0], square[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(4, 2))
