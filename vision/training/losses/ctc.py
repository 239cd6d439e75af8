"""CTC loss for batch-first recognizer logits, written to avoid host-device synchronisation.

``F.ctc_loss`` on CUDA reads the length tensors on the host; lengths living on the GPU (or int32 ones
that select another kernel path) force a device-to-host copy per call, which the profiler showed as
thousands of tiny copies per step in an earlier run. Lengths here are always int64 **CPU** tensors; only
the log-probabilities and targets live on the device.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["ctc_loss"]


def ctc_loss(logits: Tensor, targets: Tensor, target_lengths: Tensor, input_lengths: Tensor | None = None, *,
             blank: int = 0, reduction: str = "mean") -> Tensor:
    """CTC loss of batch-first logits.

    Args:
        logits: ``[N, T, C]`` raw scores (any float dtype; the log-softmax runs in float32).
        targets: ``[N, S]`` padded class ids (int64, on the logits' device or CPU), or ``[sum(S_i)]``.
        target_lengths: ``[N]`` int64 on CPU.
        input_lengths: ``[N]`` int64 on CPU; default ``T`` for every sample.
        blank: the blank class.
        reduction: ``"mean"`` (per-sample loss divided by its target length, then averaged), ``"sum"`` or
            ``"none"``.

    Returns:
        The loss (a scalar unless ``reduction="none"``). Impossible alignments (target longer than the
        frames allow) count as zero instead of inf.
    """
    n, t, _ = logits.shape
    if input_lengths is None:
        input_lengths = torch.full((n,), t, dtype=torch.long)
    if target_lengths.device.type != "cpu" or input_lengths.device.type != "cpu":
        raise ValueError("ctc_loss lengths must be CPU tensors (GPU lengths force a host sync per call)")
    log_probs = F.log_softmax(logits.float(), dim=-1).transpose(0, 1)  # [T, N, C]
    return F.ctc_loss(log_probs, targets.long(), input_lengths.long(), target_lengths.long(), blank=blank,
                      reduction=reduction, zero_infinity=True)
