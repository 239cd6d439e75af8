"""Nested tensors between two processes through one reusable shared-memory block (the model server's
transport, :mod:`vision.predictors.remote`).

Sending a tensor through a :mod:`torch.multiprocessing` queue moves its storage into a new shared-memory file
and maps that file on the other side: ~5 ms a page of a model server's traffic on our 2-core CPU, most of it
making and unmapping files. An :class:`Arena` is one such file, made once and grown when a message needs more:
:meth:`Arena.pack` copies the arrays and tensors of a message (lists, tuples, dicts and dataclasses of them)
into it and replaces each with a :class:`Ref`; the message then carries the arena tensor itself (torch sends
a file it has shared before by name, and the receiver keeps it mapped) and :func:`unpack` gives views of it
back. A sender reuses its arena for the next message only once the receiver is done with the last (the
server answers before its worker sends again; a worker copies the answer out before its next call).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["Arena", "Ref", "unpack"]

_ALIGN = 64


@dataclass(frozen=True)
class Ref:
    """Where one array lies in an arena: ``offset`` bytes in, ``shape``, torch ``dtype``, and whether it was a
    numpy array (given back as one)."""

    offset: int
    shape: tuple[int, ...]
    dtype: torch.dtype
    numpy: bool


class Arena:
    """A growable block of shared memory (a uint8 tensor in shared memory) that one process fills.

    Args:
        size: the first block's bytes (grown to fit the largest message, at least doubling).
    """

    def __init__(self, size: int = 1 << 24) -> None:
        self.size = size
        self.block: torch.Tensor | None = None

    def pack(self, message: Any) -> tuple[Any, torch.Tensor]:
        """``message`` with its arrays and tensors (any device) copied into the block, and the block."""
        leaves: list[torch.Tensor | np.ndarray] = []
        skeleton = _replace(message, leaves)
        offsets, total = [], 0
        for leaf in leaves:
            offsets.append(total)
            total += -(-leaf.nbytes // _ALIGN) * _ALIGN
        if self.block is None or self.block.numel() < total:
            self.size = max(total, 2 * self.size if self.block is not None else self.size)
            self.block = torch.empty(self.size, dtype=torch.uint8).share_memory_()
        refs = []
        for leaf, offset in zip(leaves, offsets):
            if isinstance(leaf, np.ndarray):
                dtype = torch.from_numpy(np.empty(0, leaf.dtype)).dtype
                view = _view(self.block, offset, leaf.shape, dtype)
                if view.numel():
                    view.numpy()[...] = leaf
            else:
                dtype = leaf.dtype
                _view(self.block, offset, tuple(leaf.shape), dtype).copy_(leaf)
            refs.append(Ref(offset, tuple(leaf.shape), dtype, isinstance(leaf, np.ndarray)))
        return _fill(skeleton, refs), self.block


class _Leaf(int):
    """Index of an array in a message's leaves (a marker :func:`_fill` replaces)."""


def _replace(obj: Any, leaves: list) -> Any:
    if isinstance(obj, torch.Tensor) or isinstance(obj, np.ndarray) and obj.dtype != object:
        leaves.append(obj)
        return _Leaf(len(leaves) - 1)
    return _map(obj, lambda o: _replace(o, leaves))


def _fill(obj: Any, refs: list[Ref]) -> Any:
    return refs[obj] if isinstance(obj, _Leaf) else _map(obj, lambda o: _fill(o, refs))


def _map(obj: Any, fn: Any) -> Any:
    """``obj`` with ``fn`` applied to the items of its lists, tuples, dicts or dataclass fields."""
    if isinstance(obj, (list, tuple)) and not isinstance(obj, _Leaf):
        items = [fn(o) for o in obj]
        return type(obj)(items) if type(obj) in (list, tuple) else type(obj)(*items)
    if isinstance(obj, dict):
        return {k: fn(v) for k, v in obj.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and not isinstance(obj, Ref):
        return dataclasses.replace(obj, **{f.name: fn(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                                           if f.init})
    return obj


def _view(block: torch.Tensor, offset: int, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    size = torch.empty(0, dtype=dtype).element_size()
    return block[offset : offset + count * size].view(dtype).view(shape)


def unpack(message: Any, block: torch.Tensor, copy: bool = False) -> Any:
    """``message`` with each :class:`Ref` replaced by a view of ``block`` (a copy with ``copy=True``, for a
    message whose block its sender will reuse)."""

    def leaf(ref: Ref) -> Any:
        view = _view(block, ref.offset, ref.shape, ref.dtype)
        view = view.clone() if copy else view
        return view.numpy() if ref.numpy else view

    def walk(obj: Any) -> Any:
        return leaf(obj) if isinstance(obj, Ref) else _map(obj, walk)

    return walk(message)
