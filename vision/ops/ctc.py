"""CTC decoding: best path (greedy) with per-character and per-word confidences, and frame stitching.

Pure tensor functions, vocabulary-agnostic: they return class ids; the recognition predictor maps ids to
characters (``vision.models.recognition.vocab``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["CTCPath", "ctc_best_path", "stitch_frames"]


class CTCPath(NamedTuple):
    """One decoded sequence: class ids, the probability of each emitted class, and the word confidence."""

    ids: list[int]
    char_probs: list[float]
    confidence: float


def ctc_best_path(logits: Tensor, *, blank: int = 0, lengths: Tensor | Sequence[int] | None = None,
                  log_probs: bool = False) -> list[CTCPath]:
    """Greedy CTC decoding: argmax per frame, merge repeats, drop blanks.

    Args:
        logits: ``[N, T, C]`` scores (batch first), any float dtype, any device.
        blank: index of the blank class.
        lengths: valid frames per sequence (``[N]``); frames past it (padding) are ignored. Default: all ``T``.
        log_probs: ``logits`` are already log-probabilities (skips the softmax's normalisation).

    Returns:
        One :class:`CTCPath` per sequence. A character's probability is the highest frame probability of the
        run of frames that emitted it; the word confidence is the lowest character probability (a word is
        as trustworthy as its weakest character) or, for an empty result, the mean blank probability.
    """
    if logits.dim() != 3:
        raise ValueError(f"logits must be [N, T, C], got shape {tuple(logits.shape)}")
    n, t, _ = logits.shape
    probs = logits.float().exp() if log_probs else logits.float().softmax(-1)
    best, ids = probs.max(-1)  # [N, T]
    valid = torch.arange(t, device=ids.device)[None, :] < _lengths(lengths, n, t, ids.device)[:, None]
    prev = torch.nn.functional.pad(ids, (1, 0), value=blank)[:, :-1]  # [N, T] id of the previous frame
    run_start = (ids != prev) & valid
    emit = run_start & (ids != blank)
    run_id = torch.cumsum(run_start.long(), 1) - 1  # [N, T] index of the run each frame belongs to
    run_max = torch.zeros(n, t, device=ids.device).scatter_reduce(  # [N, runs] max probability per run
        1, run_id.clamp(min=0), torch.where(valid, best, torch.zeros_like(best)), reduce="amax")
    char_p = torch.gather(run_max, 1, run_id.clamp(min=0))  # [N, T]
    blank_mean = (probs[..., blank] * valid).sum(1) / valid.sum(1).clamp(min=1)  # [N]
    emit_c, ids_c, char_c, blank_c = emit.cpu(), ids.cpu(), char_p.cpu(), blank_mean.cpu()
    out = []
    for i in range(n):
        sel = emit_c[i]
        seq = ids_c[i][sel].tolist()
        cp = char_c[i][sel].tolist()
        out.append(CTCPath(seq, cp, min(cp) if cp else float(blank_c[i])))
    return out


def _lengths(lengths: Tensor | Sequence[int] | None, n: int, t: int, device: torch.device) -> Tensor:
    if lengths is None:
        return torch.full((n,), t, device=device)
    out = torch.as_tensor(lengths, device=device)
    if out.shape != (n,):
        raise ValueError(f"lengths must have shape ({n},), got {tuple(out.shape)}")
    return out


def stitch_frames(chunks: Sequence[Tensor], starts: Sequence[int]) -> Tensor:
    """Join per-frame outputs of overlapping chunks of one long sequence into one sequence.

    Args:
        chunks: ``[T_i, C]`` frame outputs of each chunk, in order.
        starts: the frame index where each chunk begins in the full sequence (increasing).

    Returns:
        ``[T, C]``: in each overlap, frames up to the overlap's middle come from the left chunk and the rest
        from the right one, so every frame is taken from the chunk where it has the most context.
    """
    if len(chunks) != len(starts) or not chunks:
        raise ValueError("need as many starts as chunks, and at least one chunk")
    ends = [s + c.shape[0] for s, c in zip(starts, chunks)]
    # Global frame where chunk i hands over to chunk i + 1: the middle of their overlap.
    cuts = [(starts[i + 1] + ends[i]) // 2 for i in range(len(chunks) - 1)]
    bounds = [starts[0], *cuts, ends[-1]]
    pieces = [chunk[bounds[i] - start:max(bounds[i + 1], bounds[i]) - start]
              for i, (chunk, start) in enumerate(zip(chunks, starts))]
    return torch.cat(pieces, 0)
