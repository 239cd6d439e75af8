import cv2
import numpy as np
import pytest
import torch

from vision.ops.crops import box_crops, crop_widths, polygon_crops, polygon_sizes, roi_crops, warp_crops


def _pattern(h: int, w: int, seed: int = 0) -> np.ndarray:
    """A smooth random RGB pattern (blurred noise), so that resampling errors stay small."""
    rng = np.random.default_rng(seed)
    noise = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
    return cv2.GaussianBlur(noise, (0, 0), 2.0)


def _rotated_word(angle: float):
    """A page with a 40x160 pattern pasted rotated by ``angle`` degrees about its centre, plus the quad."""
    word = _pattern(40, 160)
    page = np.full((300, 400, 3), 255, np.uint8)
    canvas = np.zeros_like(page)
    canvas[130:170, 120:280] = word
    mask = np.zeros(page.shape[:2], np.uint8)
    mask[130:170, 120:280] = 1
    m = cv2.getRotationMatrix2D((200.0, 150.0), -angle, 1.0)  # cv2: positive = counter-clockwise
    rot = cv2.warpAffine(canvas, m, (400, 300), flags=cv2.INTER_LINEAR)
    rmask = cv2.warpAffine(mask, m, (400, 300), flags=cv2.INTER_NEAREST).astype(bool)
    page[rmask] = rot[rmask]
    corners = np.array([[120, 130], [280, 130], [280, 170], [120, 170]], np.float64)
    quad = corners @ m[:, :2].T + m[:, 2]
    return page, word, quad / [400, 300]


def test_box_crops_are_views_with_the_right_pixels():
    page = _pattern(100, 200)
    crops = box_crops(page, np.array([[0.1, 0.2, 0.3, 0.5], [0.0, 0.0, 1.0, 1.0]]))
    assert crops[0].shape == (30, 40, 3)
    np.testing.assert_array_equal(crops[0], page[20:50, 20:60])
    assert crops[1].shape == page.shape
    assert np.shares_memory(crops[0], page)


def test_box_crops_never_empty_and_clamped():
    page = _pattern(50, 50)
    crops = box_crops(page, np.array([[0.5, 0.5, 0.5, 0.5], [-0.2, 0.9, 1.3, 1.4]]))
    assert crops[0].shape[:2] == (1, 1)
    assert crops[1].shape[:2] == (5, 50)


@pytest.mark.parametrize("angle", [0.0, 8.0, -10.0])
def test_polygon_crops_undo_rotation(angle):
    page, word, quad = _rotated_word(angle)
    (crop,) = polygon_crops(page, quad[None])
    assert abs(crop.shape[0] - 40) <= 1 and abs(crop.shape[1] - 160) <= 1
    crop = cv2.resize(crop, (160, 40))
    inner = np.abs(crop[4:-4, 4:-4].astype(int) - word[4:-4, 4:-4].astype(int))
    assert inner.mean() < 3  # an unrotated crop of the same place differs by 17-21


def test_polygon_sizes_and_crop_widths():
    quad = np.array([[[0, 0], [90, 0], [90, 30], [0, 30]]], np.float64)
    np.testing.assert_allclose(polygon_sizes(quad), [[30, 90]])
    widths = crop_widths(np.array([[30, 90], [10, 500], [40, 4]]), 32, max_width=128, multiple=4)
    assert widths.tolist() == [96, 128, 4]


def test_roi_crops_match_resized_numpy_crops_and_pad():
    page = _pattern(120, 240)
    boxes_rel = np.array([[0.1, 0.1, 0.6, 0.4], [0.5, 0.5, 0.7, 0.9]])
    crops = box_crops(page, boxes_rel)
    sizes = np.array([c.shape[:2] for c in crops])
    widths = crop_widths(sizes, 24, max_width=200)
    image = torch.from_numpy(page).permute(2, 0, 1).float()
    boxes = torch.from_numpy(boxes_rel * [240, 120, 240, 120]).float()
    out = roi_crops(image, boxes, torch.from_numpy(widths), height=24, out_width=int(widths.max()), fill=-1.0)
    assert out.shape == (2, 3, 24, int(widths.max()))
    for i, crop in enumerate(crops):
        ref = cv2.resize(crop, (int(widths[i]), 24), interpolation=cv2.INTER_AREA).astype(np.float32)
        got = out[i, :, :, : widths[i]].permute(1, 2, 0).numpy()
        assert np.abs(got - ref).mean() < 3
        assert (out[i, :, :, widths[i] :] == -1.0).all()


def test_warp_crops_match_polygon_crops():
    page, word, quad = _rotated_word(7.0)
    image = torch.from_numpy(page).permute(2, 0, 1).float()
    poly = torch.from_numpy(quad * [400, 300])[None]
    widths = torch.tensor([160, 80])
    out = warp_crops(image, torch.cat([poly, poly]), widths, height=40, out_width=160, fill=0.0)
    assert out.shape == (2, 3, 40, 160)
    got = out[0].permute(1, 2, 0).numpy()
    assert np.abs(got[4:-4, 4:-4] - word[4:-4, 4:-4]).mean() < 3
    half = out[1, :, :, :80].permute(1, 2, 0).numpy()  # same quad squeezed to half width
    ref = cv2.resize(word, (80, 40), interpolation=cv2.INTER_AREA).astype(np.float32)
    assert np.abs(half[4:-4, 4:-4] - ref[4:-4, 4:-4]).mean() < 4
    assert (out[1, :, :, 80:] == 0).all()


def test_torch_crops_accept_empty_input():
    image = torch.zeros(3, 10, 10)
    empty = torch.zeros(0, dtype=torch.int64)
    assert roi_crops(image, torch.zeros(0, 4), empty, height=8, out_width=16).shape == (0, 3, 8, 16)
    assert warp_crops(image, torch.zeros(0, 4, 2), empty, height=8, out_width=16).shape == (0, 3, 8, 16)


def test_roi_crops_of_a_page_batch_equal_one_call_per_page():
    rng = np.random.default_rng(1)
    pages = torch.from_numpy(rng.integers(0, 256, (3, 3, 90, 160)).astype(np.float32))
    x0, y0 = rng.uniform(0, 120, 12), rng.uniform(0, 60, 12)
    boxes = np.stack([x0, y0, x0 + rng.uniform(2, 40, 12), y0 + rng.uniform(2, 30, 12)], 1)
    page = rng.integers(0, 3, 12)
    widths = torch.from_numpy(rng.integers(4, 48, 12))
    got = roi_crops(pages, torch.from_numpy(boxes), widths, height=16, out_width=48, fill=-1.0,
                    batch_index=torch.from_numpy(page))
    for b in range(3):
        sel = page == b
        ref = roi_crops(pages[b], torch.from_numpy(boxes[sel]), widths[sel], height=16, out_width=48, fill=-1.0)
        torch.testing.assert_close(got[sel], ref, rtol=0, atol=0)
    with pytest.raises(ValueError, match="batch_index"):
        roi_crops(pages, torch.from_numpy(boxes), widths, height=16, out_width=48)
