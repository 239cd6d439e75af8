"""DB post-processing and box helpers on hand-made probability maps."""

import cv2
import numpy as np
import pytest

from vision.ops.boxes import (
    box_area,
    box_iou,
    boxes_to_polygons,
    clip_boxes,
    intersection_over_first,
    order_quad,
    polygons_to_boxes,
)
from vision.ops.db_postprocess import DBOptions, binarize, db_postprocess, kernel_angle, region_score, unclip
from vision.training.losses.db import db_targets


def test_box_iou_and_area():
    a = np.array([[0, 0, 10, 10], [0, 0, 0, 5]], float)
    b = np.array([[5, 0, 15, 10], [0, 0, 10, 10]], float)
    iou = box_iou(a, b)
    assert iou[0, 0] == pytest.approx(50 / 150)
    assert iou[0, 1] == pytest.approx(1.0)
    assert iou[1].tolist() == [0.0, 0.0]  # degenerate box
    assert box_area(a).tolist() == [100.0, 0.0]
    assert intersection_over_first(b[:1], a[:1])[0, 0] == pytest.approx(0.5)


def test_polygon_box_round_trip_and_order():
    boxes = np.array([[1, 2, 5, 7], [0, 0, 1, 1]], float)
    polys = boxes_to_polygons(boxes)
    assert polys.shape == (2, 4, 2)
    assert polys[0].tolist() == [[1, 2], [5, 2], [5, 7], [1, 7]]
    np.testing.assert_array_equal(polygons_to_boxes(polys), boxes)
    shuffled = polys[0][[2, 0, 3, 1]]
    np.testing.assert_array_equal(order_quad(shuffled), polys[0])
    np.testing.assert_array_equal(clip_boxes([[-1, 0.5, 2, 0.7]]), [[0, 0.5, 1, 0.7]])


def test_binarize_rejects_non_2d():
    with pytest.raises(ValueError):
        binarize(np.zeros((2, 2, 1)), 0.5)


def test_unclip_grows_and_shrinks_a_square():
    square = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], float)
    grown = unclip(square, 2.0)
    np.testing.assert_allclose(grown.min(axis=0), [-2, -2], atol=0.2)
    np.testing.assert_allclose(grown.max(axis=0), [12, 12], atol=0.2)
    shrunk = unclip(square, -3.0)
    np.testing.assert_allclose(shrunk.max(axis=0) - shrunk.min(axis=0), [4, 4], atol=0.2)
    assert len(unclip(square, -6.0)) == 0


def test_shrunk_kernels_unclip_back_to_the_word_boxes():
    """db_targets' kernels (shrink 0.25) + unclip_ratio 0.5 restore every box, whatever its aspect ratio."""
    boxes = np.array([[20, 20, 220, 36], [30, 60, 46, 76], [100, 100, 160, 130], [250, 20, 262, 150]], float)
    t = db_targets(200, 300, boxes, shrink=0.25)
    out = db_postprocess(t["gt"].astype(np.float32), DBOptions(unclip_ratio=0.5, box_thresh=0.5))
    assert len(out.boxes) == 4
    pred = out.boxes * np.array([300, 200, 300, 200])
    iou = box_iou(boxes, pred)
    assert iou.max(axis=1).min() > 0.85
    assert out.boxes.dtype == np.float32 and out.polygons.shape == (4, 4, 2)
    assert np.all(out.scores == 1.0)


def test_low_scores_and_tiny_regions_are_dropped():
    prob = np.zeros((100, 100), np.float32)
    prob[10:20, 10:60] = 0.35  # above bin_thresh, below box_thresh
    prob[50:60, 10:60] = 0.9
    prob[80, 80] = 0.9  # single pixel: below min_size
    out = db_postprocess(prob, DBOptions(bin_thresh=0.3, box_thresh=0.5))
    assert len(out.boxes) == 1
    assert 0.45 < out.boxes[0, 1] < 0.55
    assert (
        region_score(
            prob,
            cv2.findContours((prob > 0.3).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0][0],
        )
        > 0
    )


def test_rotated_polygons_follow_the_text_angle():
    prob = np.zeros((200, 200), np.float32)
    rect = ((100, 100), (120, 16), 20.0)
    cv2.fillPoly(prob, [cv2.boxPoints(rect).astype(np.int32)], 1.0)
    straight = db_postprocess(prob)
    rotated = db_postprocess(prob, straight=False)
    assert len(straight.boxes) == len(rotated.boxes) == 1
    quad = rotated.polygons[0] * 200
    top_edge = quad[1] - quad[0]
    assert np.degrees(np.arctan2(top_edge[1], top_edge[0])) == pytest.approx(20, abs=3)
    # straight boxes are the hull of the same region
    np.testing.assert_allclose(straight.polygons[0], boxes_to_polygons(straight.boxes)[0])


def test_empty_map_gives_empty_arrays():
    out = db_postprocess(np.zeros((32, 32), np.float32))
    assert out.boxes.shape == (0, 4) and out.scores.shape == (0,) and out.polygons.shape == (0, 4, 2)
    assert out.angles.shape == (0,)


@pytest.mark.parametrize("angle", [-12.0, -3.0, 0.0, 4.0, 30.0])
def test_straight_boxes_keep_their_words_direction(angle):
    # cv2's rectangle angle turns clockwise on screen (y down): positive runs down to the right
    prob = np.zeros((240, 240), np.float32)
    cv2.fillPoly(prob, [cv2.boxPoints(((120, 70), (150, 18), angle)).astype(np.int32)], 1.0)
    cv2.fillPoly(prob, [cv2.boxPoints(((120, 180), (20, 18), angle)).astype(np.int32)], 1.0)  # a glyph
    out = db_postprocess(prob)
    assert len(out.boxes) == 2 and out.angles.shape == (2,)
    word, glyph = (0, 1) if out.boxes[0, 1] < out.boxes[1, 1] else (1, 0)
    assert out.angles[word] == pytest.approx(angle, abs=1.5)
    assert np.isnan(out.angles[glyph])  # a square region has no direction


def test_kernel_angle_folds_directions_and_drops_steep_ones():
    assert kernel_angle(((0, 0), (100, 20), 5.0)) == pytest.approx(5.0, abs=1e-3)
    assert kernel_angle(((0, 0), (20, 100), 95.0)) == pytest.approx(5.0, abs=1e-3)  # the same rectangle
    assert kernel_angle(((0, 0), (100, 20), -8.0)) == pytest.approx(-8.0, abs=1e-3)
    assert np.isnan(kernel_angle(((0, 0), (100, 20), 60.0)))  # steeper than 45 degrees: vertical text
    assert np.isnan(kernel_angle(((0, 0), (30, 20), 10.0)))  # less than twice as long as high


def test_straight_boxes_match_the_polygon_offset_they_stand_for():
    """Straight boxes skip pyclipper (the bounding box of a round-join offset is the region's, grown by the
    distance): on irregular and slanted regions they equal the offset polygon's hull within its 1/8 px grid."""
    rng = np.random.default_rng(0)
    prob = np.zeros((200, 300), np.float32)
    for _ in range(25):
        centre = (float(rng.uniform(20, 280)), float(rng.uniform(15, 185)))
        size = (float(rng.uniform(6, 40)), float(rng.uniform(3, 12)))
        quad = cv2.boxPoints((centre, size, float(rng.uniform(-20, 20)))).astype(np.int32)
        cv2.fillPoly(prob, [quad], float(rng.uniform(0.6, 1.0)))
    params = DBOptions(pad=1.5)
    out = db_postprocess(prob, params)
    contours, _ = cv2.findContours(binarize(prob, params.bin_thresh), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    expected = []
    for contour in contours:
        short = min(cv2.minAreaRect(contour)[1]) + 1.0
        if short < params.min_size or region_score(prob, contour) < params.box_thresh:
            continue
        grown = unclip(contour.reshape(-1, 2) + 0.5, params.unclip_ratio * short + params.pad)
        expected.append([*grown.min(axis=0), *grown.max(axis=0)])
    expected = np.clip(np.array(expected) / [300, 200, 300, 200], 0, 1)
    assert len(expected) == len(out.boxes) > 10
    gap = np.abs(expected[:, None] - out.boxes[None]).max(-1) * 300  # [expected, found] in map pixels
    assert gap.min(axis=1).max() < 0.2 and gap.min(axis=0).max() < 0.2


def test_region_score_is_the_mean_inside_the_contour():
    rng = np.random.default_rng(3)
    prob = rng.random((120, 160)).astype(np.float32)
    contour = np.array([[[20, 30]], [[90, 25]], [[120, 80]], [[40, 100]]], np.int32)
    mask = np.zeros(prob.shape, np.uint8)
    cv2.fillPoly(mask, [contour], 1)
    expected = float(prob[mask.astype(bool)].mean())
    assert abs(region_score(prob, contour) - expected) < 1e-6
    assert region_score(prob, contour, cv2.boundingRect(contour)) == region_score(prob, contour)


def _arc_map(size: int = 240, thickness: int = 14) -> np.ndarray:
    """A probability map holding one word kernel bent along a half circle (text on a curved baseline)."""
    prob = np.zeros((size, size), np.float32)
    cv2.ellipse(prob, (size // 2, size // 2 + 40), (80, 80), 0, 190, 350, 1.0, thickness)
    return prob


def _mask(points: np.ndarray, size: int) -> np.ndarray:
    mask = np.zeros((size, size), np.uint8)
    cv2.fillPoly(mask, [np.round(points).astype(np.int32)], 1)
    return mask.astype(bool)


def test_outlines_follow_a_curved_word_where_quads_cannot():
    """The outline of a word bent along an arc covers the grown region tightly (IoU over 0.8 with it),
    where the rotated rectangle, mostly empty inside the arc, cannot; at most 32 points, clockwise."""
    size, params = 240, DBOptions(unclip_ratio=0.5)
    prob = _arc_map(size)
    out = db_postprocess(prob, params, straight=False, outlines=True)
    assert len(out.boxes) == 1 and len(out.outlines) == 1
    outline = out.outlines[0].astype(np.float64) * size
    assert 4 <= len(outline) <= 32
    x, y = outline[:, 0], outline[:, 1]
    assert np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) > 0  # clockwise on a y-down page
    kernel = prob > params.bin_thresh
    grown = cv2.dilate(kernel.astype(np.uint8), cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (15, 15))) > 0

    def iou(a: np.ndarray) -> float:
        return float((a & grown).sum() / (a | grown).sum())

    assert iou(_mask(outline, size)) > 0.8
    assert iou(_mask(out.polygons[0] * size, size)) < 0.5
    # the outline lies within the word's box, and boxes and quads are the same with or without outlines
    x0, y0, x1, y1 = out.boxes[0]
    assert (out.outlines[0] >= [x0, y0]).all() and (out.outlines[0] <= [x1, y1]).all()
    plain = db_postprocess(prob, params).boxes
    assert np.array_equal(db_postprocess(prob, params, outlines=True).boxes, plain)
    assert np.array_equal(out.polygons, db_postprocess(prob, params, straight=False).polygons)


def test_outlines_only_when_asked_and_empty_maps():
    prob = _arc_map()
    assert db_postprocess(prob).outlines is None
    assert db_postprocess(np.zeros((50, 50), np.float32), outlines=True).outlines == []
    square = np.zeros((60, 60), np.float32)
    square[20:30, 10:50] = 1.0
    out = db_postprocess(square, outlines=True)
    (rect,) = out.outlines
    assert 4 <= len(rect) <= 8  # a straight word: its box, corners rounded by the growth at most
    assert np.allclose(np.r_[rect.min(0), rect.max(0)], out.boxes[0], atol=1 / 60)


def test_kernel_angle_is_the_long_side_of_the_drawn_rectangle():
    rng = np.random.default_rng(0)
    for _ in range(200):
        rect = ((50.0, 50.0), tuple(rng.uniform(2, 80, 2)), float(rng.uniform(-90, 180)))
        got = kernel_angle(rect)
        p = cv2.boxPoints(rect)
        dx, dy = max([p[1] - p[0], p[2] - p[1]], key=lambda e: float(e @ e))
        want = (np.degrees(np.arctan2(dy, dx)) + 90.0) % 180.0 - 90.0
        short, long = sorted(rect[1])
        if long < 2 * short or abs(want) > 45.0:
            assert np.isnan(got)
        else:
            assert got == pytest.approx(want, abs=1e-3)
