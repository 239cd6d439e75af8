"""The OCR pipeline end to end with small real stages (see _ocr_stages.py), independent of trained weights."""

import numpy as np
import pytest
from _ocr_stages import TEXT, InkDetector, TemplateReader, render_page

from vision.io.page import PageImage, TextLayerWord
from vision.ops.boxes import box_iou
from vision.pipelines.base import PageState, Pipeline
from vision.pipelines.ocr.orientation import rotate_image, rotate_points
from vision.pipelines.ocr.predictor import (
    DetectStage,
    OCROptions,
    OCRPredictor,
    build_pipeline,
    ocr_predictor,
)
from vision.structures import Document


def _ocr(det=None, reco=None, **options):
    return ocr_predictor(
        det_predictor=det or InkDetector(straight=options.get("assume_straight_pages", True)),
        reco_predictor=reco or TemplateReader(),
        **options,
    )


def _gt_boxes(words, size):
    h, w = size
    return np.array([np.r_[q.min(0), q.max(0)] / [w, h, w, h] for _, q in words])


def _pred_boxes(page):
    return np.array([w.geometry for w in page.words])


def _assert_places(page, words, min_iou=0.75):
    """Every ground-truth word is found with its text at its place (IoU of boxes >= min_iou)."""
    iou = box_iou(_gt_boxes(words, page.dimensions), _pred_boxes(page))
    best = iou.argmax(axis=1)
    assert iou.max(axis=1).min() >= min_iou
    assert [page.words[j].value for j in best] == [t for t, _ in words]


def test_reads_a_page_in_reading_order_with_geometry():
    image, words = render_page()
    doc = _ocr()([image])
    assert isinstance(doc, Document) and len(doc.pages) == 1
    page = doc.pages[0]
    assert page.render().split("\n") == TEXT
    assert [len(b.lines) for b in page.blocks] == [4]
    assert page.dimensions == image.shape[:2] and page.image is image and page.orientation == 0
    _assert_places(page, words)
    assert all(w.polygon is None and 0.8 < w.confidence <= 1.0 for w in page.words)


def test_recognition_batches_crops_across_the_pages_of_a_batch():
    reader = TemplateReader()
    pages = [render_page(TEXT[i:] + TEXT[:i])[0] for i in range(3)]
    doc = _ocr(reco=reader, pages_per_batch=2)(pages)
    assert len(doc.pages) == 3 and reader.calls == 2  # one recognizer call per batch of pages
    assert reader.seen == sum(len(p.words) for p in doc.pages) == 3 * 21
    assert [p.page_idx for p in doc.pages] == [0, 1, 2]
    assert doc.pages[1].render().split("\n") == TEXT[1:] + TEXT[:1]


@pytest.mark.parametrize("turned", [90, 180, 270])
def test_rotated_pages_read_correctly_and_geometry_maps_back(turned):
    upright, words = render_page()
    image = rotate_image(upright, turned)  # the page as scanned, turned clockwise by `turned`
    doc = _ocr(detect_orientation=True)([image])
    page = doc.pages[0]
    assert page.orientation == (360 - turned) % 360
    assert page.render().split("\n") == TEXT
    assert page.image is image and page.dimensions == image.shape[:2]
    h, w = upright.shape[:2]
    moved = [(t, rotate_points(q / [w, h], turned) * [image.shape[1], image.shape[0]]) for t, q in words]
    _assert_places(page, moved)
    assert all(wd.polygon is not None for wd in page.words)


def test_straighten_pages_reports_the_upright_page():
    upright, words = render_page()
    page = _ocr(detect_orientation=True, straighten_pages=True)([rotate_image(upright, 90)]).pages[0]
    assert page.orientation == 270 and page.dimensions == upright.shape[:2]
    np.testing.assert_array_equal(page.image, upright)
    _assert_places(page, words)


def test_upright_pages_stay_put_with_detect_orientation():
    image, _ = render_page()
    assert _ocr(detect_orientation=True)([image]).pages[0].orientation == 0


@pytest.mark.parametrize("angle", [-8.0, 6.0])
def test_skewed_page_with_rotated_boxes(angle):
    image, words = render_page(angle=angle, size=(420, 680))
    page = _ocr(assume_straight_pages=False)([image]).pages[0]
    assert page.render().split("\n") == TEXT
    h, w = page.dimensions
    quads = np.array([wd.polygon for wd in page.words]) * [w, h]  # reading order = ground-truth order
    gt = np.array([q for _, q in words])
    np.testing.assert_allclose(quads.mean(axis=1), gt.mean(axis=1), atol=3.0)  # centres within 3 px
    top = quads[:, 1] - quads[:, 0]
    angles = np.degrees(np.arctan2(top[:, 1], top[:, 0]))  # min-area rectangles of ink: descenders tilt some
    assert np.median(angles) == pytest.approx(angle, abs=1.0)
    assert _ocr(assume_straight_pages=False).pipeline.names == [
        "read", "text_layer", "polarity", "detect", "photo", "deskew", "crop", "recognize", "show_through", "sparse", "script", "layout", "structure"
    ]
    straight = _ocr()([image]).pages[0]
    assert straight.render().split("\n") != TEXT  # upright boxes on a skewed page mix lines and words


def test_text_layer_modes():
    image, words = render_page()
    h, w = image.shape[:2]
    layer = [TextLayerWord(t.upper(), tuple(np.r_[q.min(0), q.max(0)] / [w, h, w, h])) for t, q in words]
    page = PageImage(image=image, source="doc.pdf", index=3, original_size=(h, w), dpi=72.0, text_layer=layer)
    detector = InkDetector()
    auto = _ocr(det=detector)([page]).pages[0]
    assert auto.render().split("\n") == [line.upper() for line in TEXT] and detector.calls == 0
    assert all(wd.confidence == 1.0 for wd in auto.words) and auto.page_idx == 3 and auto.source == "doc.pdf"
    ocr = _ocr(det=detector, pdf_text="ocr")([page]).pages[0]
    assert ocr.render().split("\n") == TEXT and detector.calls == 1
    bare = PageImage(image=image, source="scan.pdf", index=0, original_size=(h, w))
    assert _ocr(pdf_text="layer")([bare]).pages[0].words == []
    with pytest.raises(ValueError):
        _ocr(pdf_text="maybe")


def test_a_stage_can_be_swapped():
    image, _ = render_page()
    predictor = _ocr()
    counting = InkDetector()
    predictor.pipeline = predictor.pipeline.replace("detect", DetectStage(counting))
    assert predictor([image]).pages[0].render().split("\n") == TEXT and counting.calls == 1
    assert predictor.pipeline.names == ["read", "text_layer", "polarity", "detect", "photo", "crop", "recognize", "show_through", "sparse", "script", "layout", "structure"]
    with pytest.raises(KeyError):
        predictor.pipeline.replace("nope", counting)
    with pytest.raises(ValueError):
        Pipeline([("a", list), ("a", list)])


def test_inputs_are_checked_and_empty_pages_work():
    predictor = _ocr()
    blank = np.full((50, 80, 3), 255, np.uint8)
    doc = predictor(blank)
    assert len(doc.pages) == 1 and doc.pages[0].words == [] and doc.render().strip() == ""
    for bad in ["page.png", [np.zeros((10, 10), np.uint8)], [np.zeros((10, 10, 3), np.float32)], 42]:
        with pytest.raises(ValueError):
            predictor(bad)
    assert predictor([]).pages == []


def test_options_are_typed_and_validated():
    with pytest.raises(ValueError):
        OCROptions(pages_per_batch=0)
    options = OCROptions(detect_orientation=True)
    with pytest.raises(AttributeError):
        options.detect_orientation = False  # frozen
    pipe = build_pipeline(options, InkDetector(), TemplateReader())
    assert pipe.names == ["read", "text_layer", "polarity", "orientation", "detect", "photo", "crop", "recognize", "show_through", "sparse", "script", "layout", "structure"]
    assert isinstance(OCRPredictor(pipe, options)([render_page()[0]]), Document)


def test_crops_read_as_several_words_are_split_in_proportion():
    from vision.pipelines.ocr.predictor import LayoutStage, split_spaced

    quad = np.array([[0.1, 0.2], [0.5, 0.2], [0.5, 0.3], [0.1, 0.3]])
    (a, qa), (b, qb) = split_spaced(" TOTAL 12.00 ", quad)  # 11 characters: 5 + space + 5
    assert (a, b) == ("TOTAL", "12.00")
    np.testing.assert_allclose(qa[:, 0], [0.1, 0.1 + 0.4 * 5 / 11, 0.1 + 0.4 * 5 / 11, 0.1])
    np.testing.assert_allclose(qb[:, 0], [0.1 + 0.4 * 6 / 11, 0.5, 0.5, 0.1 + 0.4 * 6 / 11])
    assert split_spaced("  ", quad) == [] and split_spaced("one", quad)[0][0] == "one"
    tilted = np.array([[0.0, 0.0], [0.4, 0.1], [0.38, 0.18], [-0.02, 0.08]])
    (_, left), (_, right) = split_spaced("ab cd", tilted)
    np.testing.assert_allclose(left[1], [0.16, 0.04])  # along the tilted top edge
    np.testing.assert_allclose(right[2], tilted[2])

    image = np.full((100, 200, 3), 255, np.uint8)
    state = PageState(PageImage(image, "p", 0, (100, 200)), image, boxes=np.array([[0.1, 0.2, 0.5, 0.3]]),
                      polygons=quad[None].astype(np.float32), texts=[("TOTAL 12.00", 0.9)])
    page = LayoutStage().page(state)
    assert [w.value for w in page.words] == ["TOTAL", "12.00"] and len(page.blocks[0].lines) == 1
    np.testing.assert_allclose(page.words[1].geometry, (0.1 + 0.4 * 6 / 11, 0.2, 0.5, 0.3), atol=1e-6)


def test_corner_boxes_equal_clip_box_of_each_row():
    from vision.ops.boxes import corner_boxes
    from vision.structures.geometry import clip_box

    corners = np.random.default_rng(0).uniform(-0.3, 1.3, (200, 2, 2))
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    got = [tuple(b) for b in corner_boxes(lo, hi).tolist()]
    assert got == [clip_box(np.r_[a, b]) for a, b in zip(lo, hi)]
