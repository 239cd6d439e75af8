import numpy as np
import pytest

from vision.structures import mask_from_rle, mask_to_rle


@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (64, 48), (0, 4)])
@pytest.mark.parametrize("fill", ["random", "zeros", "ones", "first_true"])
def test_round_trip_is_exact(shape, fill):
    rng = np.random.default_rng(1)
    mask = {
        "random": rng.random(shape) < 0.3,
        "zeros": np.zeros(shape, bool),
        "ones": np.ones(shape, bool),
    }.get(fill)
    if mask is None:
        mask = np.zeros(shape, bool)
        mask.flat[:1] = True
    rle = mask_to_rle(mask)
    assert sum(rle["counts"]) == mask.size and rle["shape"] == list(shape)
    back = mask_from_rle(rle)
    assert back.dtype == bool and back.shape == shape
    np.testing.assert_array_equal(back, mask)


def test_runs_are_row_major_and_start_with_false():
    mask = np.array([[1, 1, 0], [0, 0, 1]], dtype=bool)
    assert mask_to_rle(mask) == {"shape": [2, 3], "counts": [0, 2, 3, 1]}
    assert mask_to_rle(np.array([[0, 0, 1]], dtype=bool))["counts"] == [2, 1]


def test_non_boolean_masks_encode_non_zero_as_inside():
    np.testing.assert_array_equal(
        mask_from_rle(mask_to_rle(np.array([[0, 255], [3, 0]], np.uint8))), [[0, 1], [1, 0]]
    )


@pytest.mark.parametrize(
    "rle",
    [
        {"shape": [2, 2], "counts": [1, 2]},
        {"shape": [2, 2], "counts": [5, -1]},
        {"shape": [2, 2], "counts": [True, 3]},
        {"shape": [2], "counts": [2]},
        {"counts": []},
    ],
)
def test_malformed_runs_raise(rle):
    with pytest.raises(ValueError):
        mask_from_rle(rle)


def test_masks_must_be_2d():
    with pytest.raises(ValueError, match="2-D"):
        mask_to_rle(np.zeros((2, 2, 3), bool))
