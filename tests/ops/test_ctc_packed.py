"""ctc_best_path_packed (tensors, no per-sequence Python) agrees exactly with ctc_best_path; stitch_spans with
stitch_frames."""

from __future__ import annotations

import torch

from vision.ops.ctc import ctc_best_path, ctc_best_path_packed, stitch_frames, stitch_spans


def _peaky_logits(n: int, t: int, c: int, seed: int) -> torch.Tensor:
    """``[n, t, c]`` logits with confident frames, blank runs and repeats, like a trained model's."""
    g = torch.Generator().manual_seed(seed)
    frames = torch.randint(0, c, (n, t), generator=g)
    frames[torch.rand(n, t, generator=g) < 0.5] = 0  # blanks
    frames[:, 1::3] = frames[:, 0::3][:, :frames[:, 1::3].shape[1]]  # repeats
    return torch.randn(n, t, c, generator=g) + 6 * torch.nn.functional.one_hot(frames, c)


def test_packed_paths_equal_the_per_sequence_decoder() -> None:
    logits = _peaky_logits(16, 24, 7, seed=0)
    logits[3] = 0.0
    logits[3, :, 0] = 5.0  # all blank: confidence is the mean blank probability
    lengths = torch.tensor([24, 1, 5, 24, 12, 0, 24, 7, 24, 24, 3, 24, 24, 2, 24, 9])
    packed = ctc_best_path_packed(logits, lengths=lengths)
    for i, path in enumerate(ctc_best_path(logits, lengths=lengths)):
        k = int(packed.lengths[i])
        assert packed.ids[i, :k].tolist() == path.ids
        assert (packed.ids[i, k:] == 0).all()
        assert float(packed.confidence[i]) == path.confidence  # the same arithmetic: exactly equal
    assert packed.ids.shape == (16, 24) and packed.confidence.dtype == torch.float32


def test_packed_paths_of_log_probabilities_and_another_blank() -> None:
    log_probs = _peaky_logits(4, 10, 5, seed=1).log_softmax(-1)
    packed = ctc_best_path_packed(log_probs, blank=2, log_probs=True)
    for i, path in enumerate(ctc_best_path(log_probs, blank=2, log_probs=True)):
        assert packed.ids[i, :int(packed.lengths[i])].tolist() == path.ids
        assert float(packed.confidence[i]) == path.confidence
        assert (packed.ids[i, int(packed.lengths[i]):] == 2).all()


def test_stitch_spans_are_the_frames_stitch_frames_keeps() -> None:
    lengths, starts = [10, 10, 8], [0, 6, 12]
    chunks = [torch.arange(s, s + n, dtype=torch.float32)[:, None] for s, n in zip(starts, lengths)]
    spans = stitch_spans(lengths, starts)
    assert spans == [(0, 8), (2, 8), (2, 8)]  # hand-overs at frames 8 and 14, the overlaps' middles
    joined = torch.cat([c[a:b] for c, (a, b) in zip(chunks, spans)])
    torch.testing.assert_close(joined, stitch_frames(chunks, starts))
    torch.testing.assert_close(joined[:, 0], torch.arange(20.0))
