"""Data echoing (vision.training.echo): fresh batches interleaved with echoes of recent ones."""

from __future__ import annotations

import itertools

import pytest

from vision.training.echo import Echo


def test_one_fresh_batch_per_factor_steps_and_echoes_from_the_window() -> None:
    counter = itertools.count()
    stream = Echo(lambda: next(counter), factor=3, size=2, seed=0)
    taken, fresh = [], []
    for _ in range(12):
        taken.append(next(stream))
        fresh.append(stream.is_fresh)
    assert fresh == [True, False, False] * 4
    assert stream.fresh_count == 4
    for i, (value, is_fresh) in enumerate(zip(taken, fresh)):
        newest = i // 3
        if is_fresh:
            assert value == newest
        else:  # an echo: one of the last two fresh batches, never a future one
            assert newest - 1 <= value <= newest


def test_factor_one_is_the_plain_stream() -> None:
    counter = itertools.count()
    stream = Echo(lambda: next(counter), factor=1)
    assert [next(stream) for _ in range(5)] == [0, 1, 2, 3, 4]
    assert stream.fresh_count == 5


def test_echo_draws_are_seeded() -> None:
    def run(seed: int) -> list[int]:
        counter = itertools.count()
        stream = Echo(lambda: next(counter), factor=4, size=8, seed=seed)
        return [next(stream) for _ in range(64)]

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Echo(lambda: 0, factor=0)
    with pytest.raises(ValueError):
        Echo(lambda: 0, factor=2, size=0)

