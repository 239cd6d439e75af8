"""Host <-> device copies through pinned memory.

From pageable memory a CUDA copy is staged by the driver through a bounce buffer and holds the calling
thread (~0.7 ms of copy engine per letter page on an H100, ``benchmarks/gpu_profile.py``); from pinned
memory it is one DMA that the host does not wait for. Pinned blocks come from PyTorch's caching host
allocator, which keeps a block until the copies queued on it are done, so staging buffers can be dropped
right after the copy is queued.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

__all__ = ["to_device", "to_host"]


def to_device(array: np.ndarray, device: torch.device) -> Tensor:
    """A copy of ``array`` on ``device``: staged in pinned memory and queued without waiting on CUDA, an owned
    (writable) copy elsewhere."""
    dtype = torch.from_numpy(np.empty(0, array.dtype)).dtype
    staged = torch.empty(array.shape, dtype=dtype, pin_memory=device.type == "cuda")
    staged.numpy()[...] = array
    return staged.to(device, non_blocking=True) if device.type != "cpu" else staged


def to_host(*tensors: Tensor) -> list[np.ndarray]:
    """Numpy copies of ``tensors``; from a GPU, all copied into pinned memory with one wait for the lot."""
    if not tensors or tensors[0].device.type != "cuda":
        return [t.cpu().numpy() for t in tensors]
    host = [torch.empty(t.shape, dtype=t.dtype, pin_memory=True) for t in tensors]
    for h, t in zip(host, tensors):
        h.copy_(t, non_blocking=True)
    torch.cuda.current_stream(tensors[0].device).synchronize()
    return [h.numpy() for h in host]
