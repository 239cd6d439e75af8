"""Shared fixtures of the model tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One intra-op thread for a module: its predictors run many small batches, which threads only slow down
    (and spin for seconds on a loaded 2-core machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
