"""The sparse-page rule (photos by default, every page when asked): on pages with few readings, lone glyphs (and,
when asked, unsure readings) go."""

from __future__ import annotations

import numpy as np
import pytest

from vision.io.page import PageImage
from vision.pipelines.base import PageState
from vision.pipelines.ocr.options import options_with
from vision.pipelines.ocr.sparse import PHOTOS, SparseOptions, SparseStage, sparse_keep


def _box(x: float, y: float, w: float = 40, h: float = 20) -> list[float]:
    return [x, y, x + w, y + h]


def test_lone_glyphs_go_on_a_sparse_page_and_neighbours_stay() -> None:
    texts = [("a", 0.9), ("cat", 0.9), ("%", 0.95), ("M", 0.99), ("\u2610", 0.9), ("--", 0.9), ("SALE", 0.4)]
    boxes = np.array([
        _box(100, 100, 12),   # "a", 8 px left of "cat": same line, within one height
        _box(120, 100),       # "cat"
        _box(400, 300, 12),   # a lone "%"
        _box(600, 50, 15),    # a lone "M"
        _box(50, 500, 20),    # a lone check box: kept
        _box(300, 600),       # a lone run of dashes
        _box(700, 400, 80),   # a word of 4 letters, unsure
    ])
    keep = sparse_keep(texts, boxes, SparseOptions(max_words=80, min_confidence=0.0))
    assert keep.tolist() == [True, True, False, False, True, False, True]
    keep = sparse_keep(texts, boxes, SparseOptions(max_words=80, min_confidence=0.5))
    assert keep.tolist() == [True, True, False, False, True, False, False]


def test_a_dense_page_keeps_everything() -> None:
    texts = [("%", 0.1)] + [("word", 0.9)] * 9
    boxes = np.array([_box(10 * i, 40 * i) for i in range(10)], dtype=np.float64)
    assert sparse_keep(texts, boxes, SparseOptions(max_words=10, min_confidence=0.5)).all()
    assert not sparse_keep(texts, boxes, SparseOptions(max_words=11, min_confidence=0.5))[0]


def test_a_glyph_on_another_line_is_not_a_neighbour() -> None:
    boxes = np.array([_box(100, 100, 12), _box(120, 140)])  # "x" above "word", no vertical overlap
    assert sparse_keep([("x", 0.9), ("word", 0.9)], boxes).tolist() == [False, True]
    far = np.array([_box(100, 100, 12), _box(160, 100)])  # same line, 48 px apart: over one height
    assert sparse_keep([("x", 0.9), ("word", 0.9)], far).tolist() == [False, True]


def _state() -> PageState:
    image = np.full((200, 400, 3), 255, np.uint8)
    s = PageState(PageImage(image, "p", 0, image.shape[:2]), image)
    s.texts = [("hello", 0.9), ("#", 0.9), ("world", 0.9)]
    s.boxes = np.array([[0.1, 0.1, 0.3, 0.2], [0.5, 0.6, 0.52, 0.7], [0.32, 0.1, 0.5, 0.2]], np.float32)
    s.polygons = np.stack([np.array([[b[0], b[1]], [b[2], b[1]], [b[2], b[3]], [b[0], b[3]]]) for b in s.boxes])
    s.scores = np.array([0.9, 0.8, 0.7], np.float32)
    return s


def test_stage_filters_readings_and_their_geometry_together() -> None:
    (out,) = SparseStage()([_state()])
    assert [t for t, _ in out.texts] == ["hello", "world"]
    np.testing.assert_array_equal(out.boxes, np.array([[0.1, 0.1, 0.3, 0.2], [0.32, 0.1, 0.5, 0.2]], np.float32))
    assert out.polygons.shape == (2, 4, 2) and out.scores.tolist() == pytest.approx([0.9, 0.7])


def test_options_validate_and_zero_turns_the_stage_off() -> None:
    with pytest.raises(ValueError):
        SparseOptions(max_words=-1)
    with pytest.raises(ValueError):
        SparseOptions(min_confidence=1.5)
    assert options_with(sparse=None).sparse == SparseOptions()
    from vision.pipelines.ocr.predictor import build_pipeline

    def stub(pages: list) -> list:
        return []

    assert "sparse" not in build_pipeline(options_with(device="cpu", photo="off"), stub, stub).names  # opt-in
    on = options_with(device="cpu", sparse=PHOTOS, photo="off")
    assert "sparse" in build_pipeline(on, stub, stub).names
    assert "sparse" in build_pipeline(options_with(device="cpu"), stub, stub).names  # for photos


def test_cli_flag_maps_onto_the_options() -> None:
    import argparse

    from vision.pipelines.ocr.options import add_model_arguments, options_from_args

    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    assert options_from_args(parser.parse_args([])).sparse == SparseOptions()
    assert options_from_args(parser.parse_args(["--sparse-words", "80"])).sparse == PHOTOS


def test_service_setting_maps_onto_the_options() -> None:
    from vision.app.api.settings import ModelSettings

    assert ModelSettings().ocr_options().sparse == SparseOptions()
    assert ModelSettings(sparse_words=80).ocr_options().sparse == PHOTOS


def test_pages_and_photos_get_their_own_rule() -> None:
    """The default reads only photos (``PageState.photo``) with the rule; documents keep every reading."""
    stage = SparseStage(SparseOptions(), photos=PHOTOS)
    page, photo = _state(), _state()
    photo.photo = True
    out = stage([page, photo])
    assert len(out[0].texts) == 3 and [t for t, _ in out[1].texts] == ["hello", "world"]
