"""Show-through (``vision/pipelines/ocr/show_through.py``): faint text of the next sheet is dropped, the page's
own text kept, photos and PDF text layers untouched, and every interface maps onto the option."""

from __future__ import annotations

import argparse

import cv2
import numpy as np
import pytest
from _ocr_stages import InkDetector, render_page

from vision.io.page import PageImage
from vision.pipelines.base import PageState
from vision.pipelines.ocr.options import add_model_arguments, options_from_args
from vision.pipelines.ocr.predictor import build_pipeline
from vision.pipelines.ocr.show_through import ShowThroughOptions, ShowThroughStage, faint_words, word_contrast

GHOST = ["the back of the sheet shows", "through thin paper as faint", "grey words nobody wrote here"]


def ghosted(alpha: float = 0.2) -> tuple[np.ndarray, int]:
    """A page of black text with another page's text blended in at ``alpha`` of its contrast below the page's
    own lines, and the number of the page's own words."""
    page, words = render_page(top=40)
    other, _ = render_page(GHOST, top=220)
    ink = 1.0 - other.astype(np.float32).mean(axis=2, keepdims=True) / 255.0
    out = page.astype(np.float32) * (1.0 - alpha * ink)
    return np.clip(out, 0, 255).astype(np.uint8), len(words)


def detected(image: np.ndarray) -> PageState:
    # a low ink threshold, so the faint words are found too (as a detector finds them)
    det = InkDetector()
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    boxes = det._page(np.repeat(np.where(grey < 235, 0, 255).astype(np.uint8)[..., None], 3, axis=2)).boxes
    state = PageState(PageImage(image, "p", 0, image.shape[:2]), image)
    state.boxes = boxes
    return state


def test_contrast_is_the_spread_of_grey_levels() -> None:
    grey = np.full((20, 60), 240, np.uint8)
    grey[5:15, 5:25] = 20  # dark word
    grey[5:15, 35:55] = 200  # faint word
    c = word_contrast(grey, np.array([[0, 0, 30, 20], [30, 0, 60, 20], [100, 100, 120, 120]]))
    assert c[0] == pytest.approx(220) and c[1] == pytest.approx(40) and c[2] == 0.0  # the last: off the page
    assert word_contrast(255 - grey, np.array([[0, 0, 30, 20]]))[0] == pytest.approx(220)  # light on dark


def test_contrast_matches_numpy_percentiles_on_random_boxes() -> None:
    """The histogram read of the percentiles equals ``np.percentile`` (linear interpolation) exactly, boxes
    reaching past the image included."""
    rng = np.random.default_rng(3)
    grey = rng.integers(0, 256, (120, 160), dtype=np.uint8)
    grey[30:70, 40:120] = rng.integers(90, 140, (40, 80))
    corner = np.c_[rng.uniform(-20, 150, 300), rng.uniform(-20, 110, 300)]
    boxes = np.c_[corner, corner + rng.uniform(0, 60, (300, 2))]
    expected = []
    for x0, y0, x1, y1 in boxes:
        a, b = int(np.clip(np.floor(x0), 0, 160)), int(np.clip(np.ceil(x1), 0, 160))
        c, d = int(np.clip(np.floor(y0), 0, 120)), int(np.clip(np.ceil(y1), 0, 120))
        region = grey[c:d, a:b]
        expected.append(np.percentile(region, 99) - np.percentile(region, 1) if region.size else 0.0)
    np.testing.assert_allclose(word_contrast(grey, boxes), expected, rtol=0, atol=1e-9)


def test_faint_words_dropped_own_words_kept() -> None:
    image, n_own = ghosted(alpha=0.2)
    state = detected(image)
    before = len(state.boxes)
    assert before > n_own  # the faint lines were found too
    ShowThroughStage()([state])
    assert len(state.boxes) == n_own  # exactly the page's own words are left


def test_clean_pages_photos_and_small_pages_untouched() -> None:
    page, _ = render_page()
    state = detected(page)
    n = len(state.boxes)
    ShowThroughStage()([state])
    assert len(state.boxes) == n  # nothing faint on a clean page
    image, _ = ghosted()
    photo = detected(image)
    photo.photo = True
    n = len(photo.boxes)
    ShowThroughStage()([photo])
    assert len(photo.boxes) == n
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    boxes = detected(image).boxes[-5:] * ([image.shape[1], image.shape[0]] * 2)  # faint ones among them
    assert not faint_words(grey, boxes).any()  # under min_words: left alone
    assert not faint_words(grey, detected(image).boxes * 0, ShowThroughOptions()).any()  # no contrast at all


def test_options_everywhere() -> None:
    with pytest.raises(ValueError):
        ShowThroughOptions(ratio=1.0)
    with pytest.raises(ValueError):
        ShowThroughOptions(min_words=0)
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    assert options_from_args(parser.parse_args([])).show_through == ShowThroughOptions()
    off = options_from_args(parser.parse_args(["--show-through", "0"]))
    assert off.show_through.ratio == 0.0
    assert "show_through" not in build_pipeline(off, InkDetector(), lambda c: [("", 1.0)] * len(c)).names
    from vision.app.api.settings import ModelSettings

    assert ModelSettings(show_through=0.0).ocr_options().show_through.ratio == 0.0
    assert ModelSettings().ocr_options().show_through == ShowThroughOptions()


def test_a_few_faint_words_are_faded_print_and_stay() -> None:
    grey = np.full((400, 600), 250, np.uint8)
    boxes = []
    for i in range(20):  # 20 dark words and 3 faint ones (13%: under min_share)
        y, x = 20 + (i // 4) * 40, 20 + (i % 4) * 140
        grey[y:y + 20, x:x + 100] = np.where(np.arange(100) % 7 < 3, 15, 250)
        boxes.append([x, y, x + 100, y + 20])
    for j in range(3):
        y, x = 300, 20 + j * 140
        grey[y:y + 20, x:x + 100] = np.where(np.arange(100) % 7 < 3, 215, 250)
        boxes.append([x, y, x + 100, y + 20])
    boxes = np.array(boxes, np.float64)
    assert not faint_words(grey, boxes).any()
    loose = ShowThroughOptions(min_share=0.1)
    assert faint_words(grey, boxes, loose).sum() == 3
    sure = np.r_[np.full(20, 0.99), [0.95, 0.2, 0.3]]  # one faint word read with confidence
    assert faint_words(grey, boxes, ShowThroughOptions(min_share=0.1, max_confidence=0.9), sure).sum() == 2
