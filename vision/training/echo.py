"""Data echoing: more optimizer steps per generated batch when the generator, not the GPU, bounds training.

Synthetic data is rendered by CPU workers; on a GPU host the training step is several times faster than they
are (the recognizer: ~20k samples/s per GPU for the step, ~2k per GPU for the generator on a 64-core host of
four GPUs). Echoing (Choi et al., "Faster Neural Network Training with Data Echoing", 2019) spends the idle
GPU time on batches already made: each fresh batch is followed by ``factor - 1`` steps on batches drawn at
random from the last ``size`` fresh ones, kept on the device. Drawing from a window (rather than repeating the
same batch) keeps consecutive steps decorrelated; every batch is still seen about ``factor`` times in all.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

import numpy as np

__all__ = ["Echo"]

T = TypeVar("T")


class Echo(Generic[T]):
    """An iterator of training batches: one fresh batch, then ``factor - 1`` echoes, and again.

    Args:
        fresh: returns the next fresh batch (already on the device).
        factor: steps per fresh batch (1: no echoing).
        size: how many recent fresh batches echoes are drawn from.
        seed: seeds the draws (give each DDP rank its own; every rank takes the same number of steps).

    ``fresh_count`` counts the fresh batches taken; :attr:`is_fresh` tells whether the last batch was one.
    """

    def __init__(self, fresh: Callable[[], T], factor: int = 1, size: int = 32, seed: int = 0) -> None:
        if factor < 1 or size < 1:
            raise ValueError(f"echo factor and window must be >= 1, got {factor} and {size}")
        self.fresh, self.factor = fresh, int(factor)
        self.window: deque[T] = deque(maxlen=size)
        self.rng = np.random.default_rng(seed)
        self.fresh_count, self.is_fresh, self._phase = 0, False, 0

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._phase == 0 or not self.window:
            batch = self.fresh()
            self.window.append(batch)
            self.fresh_count += 1
            self.is_fresh, self._phase = True, (1 % self.factor)
            return batch
        self._phase = (self._phase + 1) % self.factor
        self.is_fresh = False
        return self.window[int(self.rng.integers(len(self.window)))]
