"""Zoomed detection and the ``text_scale`` stage: the zoom rule, page-relative boxes from a shrunk pass, and a
close-up page read again shrunk through the OCR pipeline."""

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

import vision
from vision.ops.boxes import box_iou
from vision.pipelines.ocr.text_scale import OFF, TextScale, zoom_for
from vision.predictors.detection.predictor import detection_predictor, fitted_size

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"


def _boxes(heights: list[float]) -> np.ndarray:
    return np.array([[0.1, 0.1 + i * 0.05, 0.3, 0.1 + i * 0.05 + h] for i, h in enumerate(heights)])


def test_zoom_rule():
    scale = TextScale(trigger=28, target=16, min_zoom=0.4, min_words=5)
    # 1000-px fitted height: relative height 0.02 -> 20 px (no second pass), 0.032 -> 32 px (zoom 0.5)
    assert zoom_for(_boxes([0.02] * 9), 1000, scale) == 1.0
    assert zoom_for(_boxes([0.032] * 9), 1000, scale) == pytest.approx(0.5)
    assert zoom_for(_boxes([0.1] * 9), 1000, scale) == 0.4  # never below min_zoom
    assert zoom_for(_boxes([0.1] * 4), 1000, scale) == 1.0  # too few words to judge
    assert zoom_for(np.zeros((0, 4)), 1000, scale) == 1.0
    assert zoom_for(_boxes([0.01] * 6 + [0.2] * 5), 1000, scale) == 1.0  # the median, not the largest
    assert zoom_for(_boxes([0.1] * 9), 1000, OFF) == 1.0
    with pytest.raises(ValueError):
        TextScale(trigger=10, target=20)
    with pytest.raises(ValueError):
        TextScale(min_zoom=0)


def test_fitted_size_zoom():
    assert fitted_size((2000, 1000), (1024, 512)) == (1024, 512)
    assert fitted_size((2000, 1000), (1024, 512), 0.5) == (512, 256)


def test_zooms_are_checked():
    page = np.full((200, 300, 3), 255, np.uint8)
    det = detection_predictor(weights=None, device="cpu", onnx=False)
    for bad in ([0.0], [1.5], [0.5, 0.5]):
        with pytest.raises(ValueError, match="zoom"):
            det([page], bad)


def _close_up() -> tuple[np.ndarray, np.ndarray]:
    """A receipt seen close: four lines of letter-spaced capitals and prices ~40 px high on a 768 x 1024
    photo-sized page, and their word boxes (px)."""
    font = ImageFont.truetype(FONT, 46)
    page = Image.new("RGB", (768, 1024), (236, 234, 228))
    draw = ImageDraw.Draw(page)
    truth = []
    for row, words in enumerate([["TOTAL", "25.85"], ["CASH", "30.00"], ["CHANGE", "4.15"], ["RM", "2.35"]]):
        y = 200 + 150 * row
        for x, word in zip((60, 470), words):
            x0 = x
            for ch in word:
                draw.text((x, y), ch, font=font, fill=(30, 30, 30), anchor="ls")
                x += font.getlength(ch) + 9  # letter-spaced, as receipt printers space capitals
            truth.append([x0, y - 36, x - 9, y + 2])
    return np.asarray(page), np.asarray(truth, float)


def test_zoomed_pass_returns_page_relative_boxes():
    """A pass at zoom 0.5 boxes the same words, in the page's relative coordinates, as a full pass."""
    page, truth = _close_up()
    det = detection_predictor(device="cpu")
    for zoom in (1.0, 0.5):
        result = det([page], [zoom])[0]
        pred = result.boxes * np.array([768, 1024, 768, 1024])
        assert box_iou(truth, pred).max(axis=1).min() > 0.5, zoom


def test_close_up_page_is_detected_again_shrunk():
    """Through the OCR pipeline: a page whose words come out over the trigger gets the zoomed pass's words;
    with the stage off, or under the trigger, the first pass stands."""
    page, _ = _close_up()
    det = detection_predictor(device="cpu")
    first = det([page])[0]
    scale = TextScale(trigger=20, target=14, min_zoom=0.3, min_words=3)
    zoom = zoom_for(first.boxes, fitted_size(page.shape[:2], (1024, 768))[0], scale)
    assert 0.3 <= zoom < 1.0
    expected = det([page], [zoom])[0]

    def words(text_scale: TextScale) -> np.ndarray:
        predictor = vision.ocr_predictor(device="cpu", text_scale=text_scale)
        assert ("text_scale" in predictor.pipeline.names) == (text_scale.trigger > 0)
        result = predictor([page]).pages[0]
        return np.array([w.geometry for w in result.words]).reshape(-1, 4)

    def same_boxes(got: np.ndarray, want: np.ndarray) -> bool:
        return len(got) == len(want) and box_iou(got, want).max(axis=1).min() > 0.99

    scaled = words(scale)
    assert same_boxes(scaled, expected.boxes)
    assert not same_boxes(scaled, first.boxes)
    assert same_boxes(words(OFF), first.boxes)
    assert same_boxes(words(TextScale(trigger=400, target=14)), first.boxes)


@pytest.mark.parametrize("settings", [{"assume_straight_pages": False}, {"outlines": True}])
def test_close_up_page_read_again_with_rotated_boxes_and_outlines(settings):
    """The second pass keeps the detector's other outputs page-relative: rotated quads and outlines lie on the
    words the straight pass finds."""
    page, truth = _close_up()
    scale = TextScale(trigger=20, target=14, min_zoom=0.3, min_words=3)
    predictor = vision.ocr_predictor(device="cpu", text_scale=scale, **settings)
    words = predictor([page]).pages[0].words
    assert len(words) == len(truth)
    boxes = np.array([w.geometry for w in words]).reshape(-1, 4) * [768, 1024, 768, 1024]
    assert box_iou(truth, boxes).max(axis=1).min() > 0.5
    for w in words:
        shape = np.asarray(w.polygon if settings.get("assume_straight_pages") is False else w.outline)
        assert shape.ndim == 2 and shape.shape[1] == 2
        assert (shape.min(0) > -0.02).all() and (shape.max(0) < 1.02).all()
