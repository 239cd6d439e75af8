"""The page-versus-photo gate: its statistics, its decision, the detector it routes photos to, and the options
every interface maps onto it."""

from __future__ import annotations

import argparse

import cv2
import numpy as np
import pytest
from _ocr_stages import InkDetector, TemplateReader, render_page

from vision.io.page import PageImage
from vision.pipelines.base import PageState
from vision.pipelines.ocr.options import add_model_arguments, options_from_args, options_with
from vision.pipelines.ocr.photo import (
    PHOTO_DETECTOR,
    PhotoOptions,
    PhotoStage,
    is_photo,
    page_stats,
    typeset_shares,
)
from vision.pipelines.ocr.polarity import PolarityStage
from vision.pipelines.ocr.predictor import build_pipeline
from vision.pipelines.ocr.stages import DetectStage


def _photo(seed: int = 0, size: tuple[int, int] = (480, 640)) -> np.ndarray:
    """A smooth, colourful picture: low-frequency colour noise blown up, with fine grain (no paper)."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (6, 8, 3)).astype(np.uint8)
    img = cv2.resize(small, size[::-1], interpolation=cv2.INTER_CUBIC).astype(np.float32)
    return np.clip(img + rng.normal(0, 6, img.shape), 0, 255).astype(np.uint8)


def _state(image: np.ndarray, n_boxes: int = 3) -> PageState:
    s = PageState(PageImage(image, "p", 0, image.shape[:2]), image)
    s.boxes = np.tile(np.array([[0.1, 0.1, 0.2, 0.15]], np.float32), (n_boxes, 1))
    return s


def test_page_statistics_tell_paper_from_pictures() -> None:
    document, _ = render_page()
    paper, colour = page_stats(document)
    assert paper > 0.8 and colour == 0.0
    tinted = (document * np.array([1.0, 0.95, 0.8])).astype(np.uint8)  # yellowed paper is still paper
    assert page_stats(tinted)[1] < 0.05
    paper, colour = page_stats(_photo())
    assert paper < 0.4 and colour > 0.2
    assert page_stats(np.zeros((0, 10, 3), np.uint8)) == (1.0, 0.0)
    assert page_stats(cv2.cvtColor(document, cv2.COLOR_RGB2GRAY))[0] == pytest.approx(page_stats(document)[0])


def test_gate_needs_few_words_and_no_paper() -> None:
    options = PhotoOptions()
    assert is_photo(_state(_photo()), options)
    assert not is_photo(_state(_photo(), n_boxes=options.max_words), options)  # dense: a document
    assert not is_photo(_state(render_page()[0]), options)
    assert is_photo(_state(render_page()[0]), PhotoOptions(mode="on"))
    assert not is_photo(_state(_photo()), PhotoOptions(mode="off"))
    for bad in ({"mode": "maybe"}, {"max_paper": 1.5}, {"min_colour": -0.1}, {"max_words": -1}):
        with pytest.raises(ValueError):
            PhotoOptions(**bad)


def _receipt_boxes(lines: int = 20) -> np.ndarray:
    """Relative boxes of a receipt's lines: an item from the left margin, a price from a right column."""
    out = []
    for i in range(lines):
        top = 0.1 + i * 0.035
        out += [[0.30, top, 0.30 + 0.02 * (3 + i % 5), top + 0.02], [0.62, top, 0.68, top + 0.02]]
    return np.array(out, np.float32)


def test_typeset_boxes_on_a_photo_make_a_document() -> None:
    """Lines of print on a natural background (a receipt on a table): enough boxes that start at shared left
    edges and share one height make a document; as many boxes of random places and sizes stay a photo."""
    options = PhotoOptions()
    receipt = _state(_photo())
    receipt.boxes = _receipt_boxes()
    assert typeset_shares(receipt.boxes * 640) == (1.0, 1.0)
    assert not is_photo(receipt, options)
    assert is_photo(receipt, PhotoOptions(typeset_words=0))  # the check off: the background decides
    short = _state(_photo())
    short.boxes = _receipt_boxes(lines=10)  # 20 boxes: too few to tell
    assert is_photo(short, options)
    rng = np.random.default_rng(3)
    scene = _state(_photo())
    xy, size = rng.uniform(0, 0.8, (40, 2)), rng.uniform(0.01, 0.05, (40, 1))
    scene.boxes = np.hstack([xy, xy + size * [3, 1]]).astype(np.float32)
    aligned, uniform = typeset_shares(scene.boxes * 640)
    assert aligned < options.typeset_aligned and uniform < options.typeset_uniform
    assert is_photo(scene, options)
    assert typeset_shares(np.zeros((2, 4))) == (0.0, 0.0)
    for bad in ({"typeset_words": -1}, {"typeset_aligned": 2.0}, {"typeset_uniform": -0.5}):
        with pytest.raises(ValueError):
            PhotoOptions(**bad)


def test_a_tilted_receipt_is_typeset_once_its_lines_are_levelled() -> None:
    """The typeset check reads the boxes under the page's level map: a receipt photographed turned by 12
    degrees has axis-aligned boxes as tall as their words are long, its levelled boxes share one height."""
    from vision.pipelines.ocr.skew import level_map

    image = _photo()
    h, w = image.shape[:2]
    rows = [[[0.1, 0.1 + 0.035 * i, 0.15 + 0.1 * (i % 4), 0.12 + 0.035 * i],
             [0.62, 0.1 + 0.035 * i, 0.68, 0.12 + 0.035 * i]] for i in range(20)]  # items of 1-4 words
    flat = np.array(rows, np.float64).reshape(-1, 4) * [w, h, w, h]
    quads = flat[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 4, 2)
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), -12.0, 1.0)  # clockwise: lines run down to the right
    turned = quads @ turn[:, :2].T + turn[:, 2]
    receipt = _state(image)
    receipt.boxes = (np.concatenate([turned.min(1), turned.max(1)], axis=1) / [w, h, w, h]).astype(np.float32)
    assert is_photo(receipt, PhotoOptions())  # as the boxes lie: no shared edges, no common height
    receipt.layout_map = level_map(np.full(len(flat), 12.0), receipt.boxes * [w, h, w, h], (h, w))
    assert receipt.layout_map is not None
    assert not is_photo(receipt, PhotoOptions())


def test_photos_are_detected_again_by_the_photo_detector() -> None:
    pages, photos = InkDetector(), InkDetector()
    detect = DetectStage(pages, photo_predictor=photos)
    gate = PhotoStage(PhotoOptions(), detect)
    document, picture = _state(render_page()[0]), _state(_photo())
    document.boxes = picture.boxes = None
    states = gate(detect([document, picture]))
    assert [s.photo for s in states] == [False, True]
    assert pages.calls == 1 and photos.calls == 1  # the document once, the photo once more
    assert all(s.boxes is not None for s in states)
    detect([picture])  # detected pages are not detected again
    assert photos.calls == 1


class _Seen(InkDetector):
    """An ink detector that keeps the pages it was given."""

    def __call__(self, pages):
        self.seen = [np.array(p) for p in pages]
        return super().__call__(pages)


def test_dark_photos_reach_the_photo_detector_as_taken() -> None:
    pages, photos = InkDetector(), _Seen()
    detect = DetectStage(pages, photo_predictor=photos)
    dark_photo = (_photo(1) * 0.35).astype(np.uint8)  # a dim street: the polarity stage inverts it
    screen = np.full((200, 400, 3), 25, np.uint8)
    screen[90:110, 40:360] = 235  # light text on a dark screen: a document, inverted and kept so
    states = [PageState(PageImage(a, "p", i, a.shape[:2]), a) for i, a in enumerate((dark_photo, screen))]
    states = PhotoStage(PhotoOptions(), detect)(detect(PolarityStage()(states)))
    assert [s.photo for s in states] == [True, False]
    np.testing.assert_array_equal(photos.seen[0], dark_photo)  # the photo as taken, not its negative
    np.testing.assert_array_equal(states[0].image, dark_photo)
    assert not states[0].inverted
    assert states[1].inverted
    np.testing.assert_array_equal(states[1].image, 255 - screen)


def test_without_a_photo_detector_the_gate_only_marks() -> None:
    detector = InkDetector()
    detect = DetectStage(detector)
    picture = _state(_photo())
    picture.boxes = None
    (out,) = PhotoStage(PhotoOptions(), detect)(detect([picture]))
    assert out.photo and detector.calls == 1 and out.boxes is not None


def test_documents_read_the_same_with_the_gate_on_and_off() -> None:
    image, _ = render_page()
    on = build_pipeline(options_with(device="cpu"), InkDetector(), TemplateReader(), InkDetector())
    off = build_pipeline(options_with(device="cpu", photo="off"), InkDetector(), TemplateReader())
    assert "photo" in on.names and "photo" not in off.names
    from vision.pipelines.ocr.predictor import OCRPredictor

    a = OCRPredictor(on, options_with(device="cpu"))([image]).pages[0]
    b = OCRPredictor(off, options_with(device="cpu", photo="off"))([image]).pages[0]
    assert a.render() == b.render() and a.render().strip()


def test_options_and_interfaces_map_onto_the_gate() -> None:
    assert options_with().photo == PhotoOptions()
    assert options_with(photo="on").photo.mode == "on"
    assert options_with(photo=None).photo == PhotoOptions()
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    assert options_from_args(parser.parse_args([])).photo == PhotoOptions()
    assert options_from_args(parser.parse_args(["--photo", "off"])).photo.mode == "off"
    from vision.app.api.settings import ModelSettings

    assert ModelSettings().ocr_options().photo == PhotoOptions()
    assert ModelSettings(photo="on").ocr_options().photo.mode == "on"


def test_the_predictor_builds_the_photo_detector_only_for_the_default_detector() -> None:
    import vision

    default = vision.ocr_predictor(device="cpu", reco_weights=None)
    photo = default.pipeline["detect"].photo_predictor
    assert photo is not None and photo is not default.pipeline["detect"].predictor
    assert vision.ocr_predictor(device="cpu", det_weights=None, reco_weights=None).pipeline[
        "detect"].photo_predictor is None  # a chosen detector is never swapped out
    assert vision.ocr_predictor(device="cpu", reco_weights=None, photo="off").pipeline[
        "detect"].photo_predictor is None
    assert not photo.built  # documents never load it
    rotated = default.with_options(assume_straight_pages=False).pipeline["detect"].photo_predictor
    assert rotated is not None and rotated.straight is False and photo.straight is True
    picture = _photo()
    default([picture]), default.with_options(assume_straight_pages=False)([picture])
    assert photo.built and rotated.built  # one model, built on the first photo, shared by the copy
    assert vision.ocr_predictor(det_predictor=InkDetector(), reco_weights=None).pipeline[
        "detect"].photo_predictor is None  # nor a detector given ready-made
    from vision.models import get_entry

    assert get_entry(PHOTO_DETECTOR).task == "detection" and get_entry(PHOTO_DETECTOR).weights is not None


def test_photos_read_the_shared_page_upload() -> None:
    """The GPU layout on the CPU: both detectors fit pages on the recognizer's device, so the photo detector
    reads the same uploaded page as the default one and the crop cutter (random weights)."""
    from functools import partial

    import torch

    from vision.pipelines.ocr.photo import LazyDetector
    from vision.pipelines.ocr.predictor import OCRPredictor
    from vision.predictors.detection.predictor import detection_predictor
    from vision.predictors.recognition.predictor import recognition_predictor

    torch.manual_seed(0)
    build = partial(detection_predictor, weights=None, device="cpu", resize="device", onnx=False)
    photo = LazyDetector(build)
    reco = recognition_predictor(weights=None, device="cpu", onnx=False)
    options = options_with(device="cpu", crops_on_device=True, photo="on")
    pipeline = build_pipeline(options, build(), reco, photo)
    assert pipeline["detect"].device is not None  # pages are uploaded once and shared
    doc = OCRPredictor(pipeline, options)([_photo(), render_page()[0]])
    assert photo.built and len(doc.pages) == 2


def test_mode_on_detects_each_page_once_with_the_photo_detector() -> None:
    pages, photos = InkDetector(), InkDetector()
    options = options_with(device="cpu", photo="on")
    pipeline = build_pipeline(options, pages, TemplateReader(), photos)
    assert pipeline.names.index("photo") < pipeline.names.index("detect")
    from vision.pipelines.ocr.predictor import OCRPredictor

    OCRPredictor(pipeline, options)([render_page()[0], _photo()])
    assert pages.calls == 0 and photos.calls == 1  # one batch, every page read by the photo detector
