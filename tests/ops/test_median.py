"""``vision.ops.median.median`` against ``np.median``."""

from __future__ import annotations

import numpy as np
import pytest

from vision.ops.median import median


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8])
def test_equals_numpy_median(dtype) -> None:
    rng = np.random.default_rng(0)
    for n in range(1, 40):
        for _ in range(20):
            values = (rng.normal(size=n) * 100).astype(dtype) if dtype in (np.float64, np.float32) \
                else rng.integers(0, 255, size=n).astype(dtype)
            assert median(values) == float(np.median(values)), (n, values)
            assert median(list(values)) == float(np.median(values))


def test_python_floats_and_empty() -> None:
    assert median([0.1, 0.7, 0.2, 0.4]) == float(np.median([0.1, 0.7, 0.2, 0.4]))
    assert np.isnan(median([]))


def test_imports_without_torch() -> None:
    """The layout stages use it in torch-free processes (the Ray driver): ``vision.ops`` loads torch lazily."""
    import subprocess
    import sys

    code = "import sys, vision.ops.median; assert 'torch' not in sys.modules, 'torch imported'"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
