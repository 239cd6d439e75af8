"""Batches of synthetic word crops for CTC training, made in DataLoader worker processes.

Workers build whole batches (render, pad to one width, encode labels), so the training process only moves
ready uint8 tensors to the GPU. Each worker's stream is seeded by ``(seed, start_step, worker_id)`` (and the
DDP rank, for ranks above 0): a run resumed at step ``s`` draws fresh samples instead of replaying the first
ones, and no two GPUs see the same samples.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from vision.models.recognition.vocab import encode
from vision.predictors.recognition.preprocess import batch_crops, bucket_width
from vision.training.synth.words import WordRenderer

__all__ = ["SyntheticWordBatches", "WordBatch", "collate_words", "render_fixed_set"]


class WordBatch(NamedTuple):
    """``images [N, 3, 32, W]`` uint8, ``targets [N, S]`` int64 (0-padded), ``lengths [N]`` int64 (CPU),
    ``texts`` the label strings."""

    images: torch.Tensor
    targets: torch.Tensor
    lengths: torch.Tensor
    texts: list[str]


def collate_words(samples: Sequence[tuple[np.ndarray, str]], width: int) -> WordBatch:
    """Pad ``(HEIGHTxWx3 uint8, text)`` samples to ``width`` and encode their labels."""
    images = batch_crops([img[:, :width] for img, _ in samples], width)
    ids = [encode(t) for _, t in samples]
    lengths = np.array([len(i) for i in ids], np.int64)
    targets = np.zeros((len(ids), max(1, int(lengths.max()))), np.int64)
    for row, seq in enumerate(ids):  # numpy row writes: about 5x cheaper than a torch.tensor per row
        targets[row, :len(seq)] = seq
    return WordBatch(images, torch.from_numpy(targets), torch.from_numpy(lengths), [t for _, t in samples])


class SyntheticWordBatches(IterableDataset):
    """Endless stream of :class:`WordBatch` (use with ``DataLoader(batch_size=None)``)."""

    def __init__(self, renderer: WordRenderer, batch_size: int, width: int, seed: int = 0,
                 start_step: int = 0, group: int = 1, rank: int = 0) -> None:
        super().__init__()
        self.renderer, self.batch_size, self.width = renderer, batch_size, width
        self.seed, self.start_step, self.group, self.rank = seed, start_step, group, rank

    def __iter__(self) -> Iterator[WordBatch]:
        info = get_worker_info()
        worker = info.id if info is not None else 0
        key = [self.seed, self.start_step, worker] + ([self.rank] if self.rank else [])
        rng = np.random.default_rng(key)
        while True:
            if self.group <= 1:  # every batch padded to the full width
                yield collate_words([self.renderer(rng) for _ in range(self.batch_size)], self.width)
                continue
            # Width-bucketed like the predictor: render `group` batches, sort by width, pad each to its bucket.
            samples = sorted((self.renderer(rng) for _ in range(self.group * self.batch_size)),
                             key=lambda s: s[0].shape[1])
            chunks = [samples[i:i + self.batch_size] for i in range(0, len(samples), self.batch_size)]
            for k in rng.permutation(len(chunks)):
                widest = chunks[k][-1][0].shape[1]
                yield collate_words(chunks[k], min(self.width, bucket_width(widest)))


def render_fixed_set(renderer: WordRenderer, n: int, seed: int) -> list[tuple[np.ndarray, str]]:
    """``n`` samples from a seed kept apart from training streams (a fixed synthetic validation set)."""
    rng = np.random.default_rng([seed, 2**31 - 1])
    return [renderer(rng) for _ in range(n)]
