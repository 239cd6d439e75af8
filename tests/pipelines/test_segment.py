"""The segment pipeline over a tiny random SAM: prompted and automatic masks as Regions on a Page."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vision.io.page import PageImage
from vision.predictors.segmentation.predictor import SamPredictor
from vision.models.segmentation.sam import build_sam
from vision.pipelines.segment import segment_document, segment_image
from vision.structures import Document


@pytest.fixture(scope="module")
def predictor() -> SamPredictor:
    torch.manual_seed(0)
    return SamPredictor(build_sam("test"), device="cpu")


@pytest.fixture
def image() -> np.ndarray:
    rng = np.random.default_rng(0)
    img = np.full((90, 150, 3), 30, np.uint8)
    img[20:70, 40:120] = rng.integers(150, 255, 3)
    return img


def _check_region(region, shape) -> None:
    assert region.kind == "mask" and region.mask.shape == shape and region.mask.dtype == bool
    x0, y0, x1, y1 = region.geometry
    assert 0 <= x0 <= x1 <= 1 and 0 <= y0 <= y1 <= 1
    if region.mask.any():  # the box is the mask's tight box, in relative coordinates
        ys, xs = np.nonzero(region.mask)
        assert (x0, y0, x1, y1) == (xs.min() / shape[1], ys.min() / shape[0], (xs.max() + 1) / shape[1],
                                    (ys.max() + 1) / shape[0])


def test_point_prompt(predictor: SamPredictor, image: np.ndarray) -> None:
    page = segment_image(image, predictor, points=[[80, 45], [10, 10]], labels=[1, 0], multimask=True)
    assert page.dimensions == (90, 150) and len(page.regions) == 1
    _check_region(page.regions[0], (90, 150))


def test_boxes_give_one_mask_each(predictor: SamPredictor, image: np.ndarray) -> None:
    page = segment_image(image, predictor, boxes=[[40, 20, 120, 70], [0, 0, 50, 50]])
    assert len(page.regions) == 2
    for region in page.regions:
        _check_region(region, (90, 150))


def test_point_and_box_together(predictor: SamPredictor, image: np.ndarray) -> None:
    page = segment_image(image, predictor, points=[[80, 45]], boxes=[[40, 20, 120, 70]])
    assert len(page.regions) == 1
    with pytest.raises(ValueError, match="at most one box"):
        segment_image(image, predictor, points=[[80, 45]], boxes=[[0, 0, 5, 5], [1, 1, 6, 6]])
    with pytest.raises(ValueError, match="give points"):
        segment_image(image, predictor)


def test_auto_and_document_export(predictor: SamPredictor, image: np.ndarray) -> None:
    page_image = PageImage(image=image, source="x.png", index=3, original_size=(90, 150))
    options = {"points_per_side": 4, "pred_iou_thresh": -1.0, "stability_score_thresh": 0.0}
    doc = segment_document([page_image], predictor, auto=True, auto_options=options)
    page = doc.pages[0]
    assert page.page_idx == 3 and page.source == "x.png" and page.regions
    scores = [r.score for r in page.regions]
    assert scores == sorted(scores, reverse=True)
    for region in page.regions:
        _check_region(region, (90, 150))
    again = Document.from_dict(doc.export())  # masks survive the JSON export (run-length encoded)
    assert np.array_equal(again.pages[0].regions[0].mask, page.regions[0].mask)
