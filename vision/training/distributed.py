"""Data-parallel training helpers: one process per GPU under ``torchrun``, or a single process.

``torchrun --nproc_per_node=N -m vision.training.recognition ...`` sets ``RANK``, ``WORLD_SIZE`` and
``LOCAL_RANK``; :func:`setup` then joins the process group (NCCL on CUDA, gloo on the CPU, which the tests
use) and pins the process to its GPU. Without those variables it is a no-op: one process, rank 0.

Ranks must take the same decisions (stop now, learning rate, compile or not), or a collective hangs or the
replicas drift apart: :meth:`Dist.agree` broadcasts rank 0's numbers to every rank.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

__all__ = ["Dist", "setup"]


@dataclass(frozen=True)
class Dist:
    """This process's place in the job."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    @property
    def main(self) -> bool:
        """Rank 0: the one that validates, logs and writes checkpoints."""
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world > 1

    def agree(self, values: list[float]) -> list[float]:
        """Rank 0's ``values`` on every rank (the local values when single-process)."""
        if not self.active:
            return values
        t = torch.tensor(values, dtype=torch.float64, device=self.device if self.device.type == "cuda" else "cpu")
        dist.broadcast(t, src=0)
        return t.tolist()

    def total(self, value: float) -> float:
        """The sum of ``value`` over ranks."""
        if not self.active:
            return value
        t = torch.tensor([value], dtype=torch.float64, device=self.device if self.device.type == "cuda" else "cpu")
        dist.all_reduce(t)
        return float(t.item())

    def barrier(self) -> None:
        if self.active:
            dist.barrier()

    def close(self) -> None:
        if self.active and dist.is_initialized():
            dist.destroy_process_group()


def setup(device: str | None = None) -> Dist:
    """Join the ``torchrun`` job described by the environment (or return a single-process :class:`Dist`)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available() and device != "cpu"
    dev = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(dev)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world)
    return Dist(rank=rank, world=world, local_rank=local, device=dev)
