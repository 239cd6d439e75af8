"""CTC decoding: best path (greedy) with per-character and per-word confidences, and frame stitching.

Pure tensor functions, vocabulary-agnostic: they return class ids; the recognition predictor maps ids to
characters (``vision.models.recognition.vocab``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["CTCPath", "PackedPaths", "ctc_best_path", "ctc_best_path_packed", "stitch_frames", "stitch_spans"]


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
    ids, emit, char_p, blank_mean = _best_path_frames(logits, blank, lengths, log_probs)
    emit_c, ids_c, char_c, blank_c = emit.cpu(), ids.cpu(), char_p.cpu(), blank_mean.cpu()
    out = []
    for i in range(len(ids_c)):
        sel = emit_c[i]
        seq = ids_c[i][sel].tolist()
        cp = char_c[i][sel].tolist()
        out.append(CTCPath(seq, cp, min(cp) if cp else float(blank_c[i])))
    return out


class PackedPaths(NamedTuple):
    """Best paths of a batch as tensors (on the logits' device): emitted ids packed to the left, then ``blank``."""

    ids: Tensor  # [N, T] int64: the emitted class ids of each sequence first, then ``blank`` up to T
    lengths: Tensor  # [N] int64: emitted ids per sequence
    confidence: Tensor  # [N] float32: as CTCPath.confidence


def ctc_best_path_packed(logits: Tensor, *, blank: int = 0, lengths: Tensor | Sequence[int] | None = None,
                         log_probs: bool = False) -> PackedPaths:
    """:func:`ctc_best_path` without leaving the device: same ids and confidences (same arithmetic), as tensors.

    No per-sequence Python and no host synchronisation: a GPU caller copies ``ids`` and ``confidence`` to the
    host once per batch (asynchronously) and turns the id rows into strings in one vectorised step.

    Args:
        logits: ``[N, T, C]`` scores (batch first), any float dtype, any device.
        blank: index of the blank class (also the filler of ``ids`` past ``lengths``).
        lengths: valid frames per sequence (``[N]``); best on the logits' device (else one blocking copy).
        log_probs: ``logits`` are already log-probabilities.
    """
    ids, emit, char_p, blank_mean = _best_path_frames(logits, blank, lengths, log_probs)
    n, t = ids.shape
    slot = torch.where(emit, torch.cumsum(emit, 1) - 1, t)  # [N, T] packed position, T = discarded
    packed = torch.full((n, t + 1), blank, dtype=ids.dtype, device=ids.device).scatter_(1, slot, ids)[:, :t]
    weakest = torch.where(emit, char_p, torch.inf).amin(1)  # [N] lowest emitted character probability
    confidence = torch.where(emit.any(1), weakest, blank_mean)
    return PackedPaths(packed, emit.sum(1), confidence)


def _best_path_frames(logits: Tensor, blank: int, lengths: Tensor | Sequence[int] | None, log_probs: bool
                      ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per frame: argmax ids, emission mask, probability of the emitted character (``[N, T]`` each), and the
    mean blank probability (``[N]``); shared by both decoders so that they agree exactly."""
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
    return ids, emit, char_p, blank_mean


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
    spans = stitch_spans([c.shape[0] for c in chunks], starts)
    return torch.cat([chunk[a:b] for chunk, (a, b) in zip(chunks, spans)], 0)


def stitch_spans(lengths: Sequence[int], starts: Sequence[int]) -> list[tuple[int, int]]:
    """The frames :func:`stitch_frames` takes from each chunk: ``(first, end)`` in the chunk's own frames.

    Args:
        lengths: frames of each chunk, in order.
        starts: the frame index where each chunk begins in the full sequence (increasing).
    """
    if len(lengths) != len(starts) or not lengths:
        raise ValueError("need as many starts as chunks, and at least one chunk")
    ends = [s + n for s, n in zip(starts, lengths)]
    # Global frame where chunk i hands over to chunk i + 1: the middle of their overlap.
    cuts = [(starts[i + 1] + ends[i]) // 2 for i in range(len(lengths) - 1)]
    bounds = [starts[0], *cuts, ends[-1]]
    return [(bounds[i] - start, max(bounds[i + 1], bounds[i]) - start) for i, start in enumerate(starts)]
