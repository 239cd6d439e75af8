"""Suite-wide settings: deterministic seeds, a thread count that suits the 2-core CI machine, a private cache."""

import atexit
import os
import random
import shutil
import tempfile

import numpy as np
import pytest
import torch

torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))

if "VISION_CACHE" not in os.environ:  # ONNX exports and checkpoints of this run stay out of the home folder
    os.environ["VISION_CACHE"] = tempfile.mkdtemp(prefix="vision-test-cache-")
    atexit.register(shutil.rmtree, os.environ["VISION_CACHE"], True)


@pytest.fixture(autouse=True)
def _seed() -> None:
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
