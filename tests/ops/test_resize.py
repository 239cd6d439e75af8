"""Device-side resizing (``vision.ops.resize``) against OpenCV's ``INTER_AREA`` / ``INTER_LINEAR`` results."""

import cv2
import numpy as np
import pytest
import torch

from vision.ops.resize import resize_taps, resize_uint8, resize_weights


def _images(shape: tuple[int, int]) -> list[np.ndarray]:
    rng = np.random.default_rng(shape[0] * 7 + shape[1])
    noise = rng.integers(0, 256, (*shape, 3), dtype=np.uint8)
    return [noise, cv2.GaussianBlur(noise, (0, 0), 1.5)]  # worst case, and a smooth one


@pytest.mark.parametrize(
    ("src", "dst"),
    [((1650, 1275), (1024, 791)), ((700, 500), (512, 366)), ((64, 48), (32, 24)), ((300, 200), (640, 427)),
     ((40, 30), (1024, 768)), ((33, 17), (33, 17))],
)
def test_matches_opencv_within_one_grey_level(src, dst):
    """Shrinking matches ``INTER_AREA`` (exact overlaps), enlarging ``INTER_LINEAR`` (OpenCV's 11-bit fixed-point
    weights differ from exact ones by at most one grey level)."""
    interp = cv2.INTER_AREA if dst[0] < src[0] else cv2.INTER_LINEAR
    for image in _images(src):
        ref = cv2.resize(image, (dst[1], dst[0]), interpolation=interp)
        out = resize_uint8(torch.from_numpy(image), dst).numpy()
        assert out.shape == ref.shape and out.dtype == np.uint8
        diff = np.abs(out.astype(np.int16) - ref)
        assert diff.max() <= 1
        if interp == cv2.INTER_AREA and src[0] % dst[0]:  # (integer factors: OpenCV rounds halves up)
            assert (diff > 0).mean() < 1e-3  # float rounding only


def test_weights_rows_sum_to_one_and_identity():
    for src, dst in [(10, 3), (3, 10), (1650, 1024), (7, 7)]:
        w = resize_weights(src, dst)
        assert w.shape == (dst, src)
        torch.testing.assert_close(w.sum(1), torch.ones(dst), atol=1e-5, rtol=0)
    torch.testing.assert_close(resize_weights(5, 5), torch.eye(5))


def test_taps_are_the_weight_matrix_non_zeros():
    for src, dst in [(1650, 1024), (1275, 791), (10, 3), (3, 10), (300, 640), (7, 1)]:
        index, taps = resize_taps(src, dst)
        assert index.shape == taps.shape and int(index.max()) < src
        dense = torch.zeros(dst, src).scatter_add_(1, index, taps)
        torch.testing.assert_close(dense, resize_weights(src, dst), atol=0, rtol=0)
        assert index.shape[1] <= -(-src // dst) + 1  # a band: a few taps per output pixel


def test_bad_input_is_rejected():
    with pytest.raises(ValueError):
        resize_uint8(torch.zeros(4, 4, 3), (2, 2))  # float
    with pytest.raises(ValueError):
        resize_uint8(torch.zeros(4, 4, dtype=torch.uint8), (2, 2))  # no channel axis
    with pytest.raises(ValueError):
        resize_weights(0, 3)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_opencv_within_one_grey_level():
    image = _images((1650, 1275))[1]
    ref = cv2.resize(image, (791, 1024), interpolation=cv2.INTER_AREA)
    out = resize_uint8(torch.from_numpy(image).cuda(), (1024, 791)).cpu().numpy()
    assert np.abs(out.astype(np.int16) - ref).max() <= 1
