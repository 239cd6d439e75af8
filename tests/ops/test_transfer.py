"""Host <-> device copies (vision.ops.transfer): exact copies, owned by the caller, any array layout."""

import numpy as np
import pytest
import torch

from vision.ops.transfer import to_device, to_host


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int64])
def test_to_device_copies_any_layout_exactly(dtype):
    base = np.arange(5 * 7 * 3).reshape(5, 7, 3).astype(dtype)
    for array in (base, np.rot90(base), base[:, ::2]):  # contiguous, negative strides, gaps
        out = to_device(array, torch.device("cpu"))
        assert out.dtype == torch.from_numpy(np.empty(0, dtype)).dtype and tuple(out.shape) == array.shape
        np.testing.assert_array_equal(out.numpy(), array)
        out.zero_()  # an owned copy: the source is untouched
        assert array.any()


def test_to_host_returns_numpy_copies_in_order():
    a, b = torch.arange(6).view(2, 3), torch.rand(4)
    ha, hb = to_host(a, b)
    np.testing.assert_array_equal(ha, a.numpy())
    np.testing.assert_array_equal(hb, b.numpy())
    assert to_host() == []


@pytest.mark.gpu
def test_round_trip_through_the_gpu():
    array = np.random.default_rng(0).integers(0, 256, (33, 17, 3), dtype=np.uint8)
    on_gpu = to_device(array, torch.device("cuda"))
    assert on_gpu.is_cuda
    (back,) = to_host(on_gpu)
    np.testing.assert_array_equal(back, array)
