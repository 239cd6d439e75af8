import numpy as np
import pytest

from vision.pipelines.ocr.reading_order import group_lines
from vision.pipelines.ocr.orientation import (
    deskew_boxes,
    dominant_angle,
    is_sideways,
    pick_probe_words,
    prefers_flip,
    rotate_image,
    rotate_points,
    unrotate_points,
)


def _word_boxes(n: int = 20, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x0, y0 = rng.uniform(0, 800, n), rng.uniform(0, 1000, n)
    w, h = rng.uniform(15, 200, n), rng.uniform(18, 24, n)  # single letters to long words
    return np.stack([x0, y0, x0 + w, y0 + h], axis=1)


def _quads(angle: float, n: int = 12, start: tuple[float, float] = (100.0, 300.0)) -> np.ndarray:
    """Word quads along a line tilted by ``angle`` degrees (clockwise from the text's top-left)."""
    t = np.radians(angle)
    d, up = np.array([np.cos(t), np.sin(t)]), np.array([-np.sin(t), np.cos(t)])
    quads = []
    for i in range(n):
        p0 = np.array(start) + d * i * 90
        quads.append([p0, p0 + 70 * d, p0 + 70 * d + 20 * up, p0 + 20 * up])
    return np.array(quads)


def test_sideways_from_box_aspect():
    boxes = _word_boxes()
    assert not is_sideways(boxes)
    assert is_sideways(boxes[:, [1, 0, 3, 2]])  # the same page turned by 90 degrees
    assert not is_sideways(boxes[:2, [1, 0, 3, 2]])  # too few boxes to decide


def test_flip_needs_a_clear_gain():
    assert prefers_flip(np.array([0.2, 0.3, 0.1]), np.array([0.9, 0.8, 0.95]))
    assert not prefers_flip(np.array([0.9, 0.8]), np.array([0.3, 0.2]))
    assert not prefers_flip(np.array([0.50, 0.50]), np.array([0.52, 0.53]))  # within the margin
    assert not prefers_flip(np.array([]), np.array([]))


def test_probe_words_are_the_widest():
    boxes = np.array([[0, 0, 10, 5], [0, 0, 50, 5], [0, 0, 30, 5]], dtype=float)
    assert pick_probe_words(boxes, 2).tolist() == [1, 2]


@pytest.mark.parametrize("angle", [-10.0, -3.0, 0.0, 4.5, 10.0])
def test_dominant_angle_measures_skew_despite_outliers(angle):
    quads = _quads(angle)
    outliers = _quads(angle + 35.0, n=3)  # a few stray boxes at another angle
    assert dominant_angle(np.concatenate([quads, outliers])) == pytest.approx(angle, abs=0.01)
    assert dominant_angle(np.zeros((0, 4, 2))) == 0.0


def test_deskewed_boxes_separate_close_skewed_lines():
    quads = np.concatenate([_quads(10.0, n=8), _quads(10.0, n=8, start=(100.0, 326.0))])  # 26 px apart
    size = (1000, 1200)
    rel = quads / [size[1], size[0]]
    level = deskew_boxes(rel, dominant_angle(quads), size)
    assert np.ptp(level[:8, 1]) < 1.0 and np.ptp(level[:8, 3]) < 1.0
    assert group_lines(level) == [list(range(8)), list(range(8, 16))]
    tilted = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1)  # upright boxes of tilted words
    assert group_lines(tilted) != [list(range(8)), list(range(8, 16))]


@pytest.mark.parametrize("degrees", [0, 90, 180, 270])
def test_rotations_move_pixels_and_points_together(degrees):
    image = np.zeros((40, 60, 3), np.uint8)
    image[10, 45] = 255  # one marked pixel at x=45, y=10
    turned = rotate_image(image, degrees)
    assert turned.shape[:2] == ((40, 60) if degrees in (0, 180) else (60, 40))
    y, x = np.argwhere(turned[..., 0] == 255)[0]
    centre = np.array([(45 + 0.5) / 60, (10 + 0.5) / 40])
    moved = rotate_points(centre, degrees)
    np.testing.assert_allclose(moved, [(x + 0.5) / turned.shape[1], (y + 0.5) / turned.shape[0]])
    np.testing.assert_allclose(unrotate_points(moved, degrees), centre)


def test_rotation_rejects_other_angles():
    with pytest.raises(ValueError):
        rotate_image(np.zeros((2, 2, 3), np.uint8), 45)
    with pytest.raises(ValueError):
        rotate_points(np.zeros(2), 30)


def test_text_evidence_counts_confident_wide_boxes():
    from vision.pipelines.ocr.orientation import doubtful, text_evidence

    wide = np.array([[0, 0, 60, 20], [0, 30, 90, 50], [0, 60, 10, 90]], dtype=float)  # the last one is tall
    assert text_evidence(wide, np.array([0.9, 0.8, 0.7])) == pytest.approx(1.7)
    page = _word_boxes(30)
    assert not doubtful(page, np.full(30, 0.8))
    assert doubtful(page, np.full(30, 0.6))  # weak detections
    assert doubtful(page[:, [1, 0, 3, 2]], np.full(30, 0.8))  # tall boxes
    assert doubtful(page[:5], np.full(5, 0.8))  # few boxes
    assert doubtful(np.zeros((0, 4)), np.zeros(0))


@pytest.mark.parametrize("angle", [-10.0, 4.0])
def test_level_image_levels_text_and_maps_back(angle):
    from vision.pipelines.ocr.orientation import level_image

    image = np.full((200, 300, 3), 255, np.uint8)
    quads = _quads(angle, n=3, start=(40.0, 100.0))
    levelled, back = level_image(image, angle)
    h, w = image.shape[:2]
    assert levelled.shape[0] >= h and levelled.shape[1] >= w and (levelled[:3, :3] == 255).all()
    forward = np.vstack([back, [0, 0, 1]])
    inv = np.linalg.inv(forward)[:2]  # page -> levelled
    moved = quads @ inv[:, :2].T + inv[:, 2]
    top = moved[:, 1] - moved[:, 0]
    np.testing.assert_allclose(np.degrees(np.arctan2(top[:, 1], top[:, 0])), 0.0, atol=1e-6)
    np.testing.assert_allclose(moved @ back[:, :2].T + back[:, 2], quads, atol=1e-6)
