"""Frame-level knowledge distillation between CTC recognizers that share a frame rate.

A student learns the teacher's per-frame class distribution (where the character spikes sit and what the
teacher hesitates between) beside the CTC loss on the labels. Both models must emit the same frames for
the same image: here every recognizer maps ``[N, 3, 32, W]`` to ``W / 4`` frames.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

__all__ = ["ctc_distillation"]


def ctc_distillation(student: Tensor, teacher: Tensor, target_lengths: Tensor, *,
                     temperature: float = 1.0) -> Tensor:
    """KL(teacher || student) of each frame's class distribution, summed over the frames.

    Args:
        student: ``[N, T, C]`` raw scores (gradients flow here).
        teacher: ``[N, T, C]`` raw scores of the teacher on the same images (no gradient needed).
        target_lengths: ``[N]`` label lengths; each sample's sum is divided by its length, as
            :func:`~vision.training.losses.ctc.ctc_loss` does with ``reduction="mean"``, so the two
            losses keep the same scale.
        temperature: softens both distributions; the result is multiplied by ``temperature ** 2`` so the
            gradients' scale does not depend on it.

    Returns:
        The batch mean (a scalar, float32).
    """
    if student.shape != teacher.shape:
        raise ValueError(f"student and teacher frames differ: {tuple(student.shape)} vs "
                         f"{tuple(teacher.shape)}")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    log_s = F.log_softmax(student.float() / temperature, dim=-1)
    log_t = F.log_softmax(teacher.detach().float() / temperature, dim=-1)
    kl = F.kl_div(log_s, log_t, log_target=True, reduction="none").sum(dim=(1, 2))  # [N]
    lengths = target_lengths.to(kl.device, non_blocking=True).clamp(min=1)
    return (kl / lengths).mean() * temperature**2
