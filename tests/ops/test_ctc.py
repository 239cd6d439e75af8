"""CTC best-path decoding and frame stitching."""

from __future__ import annotations

import pytest
import torch

from vision.ops.ctc import ctc_best_path, stitch_frames


def _logits(frames: list[int], classes: int = 5, p: float = 0.9) -> torch.Tensor:
    """[1, T, C] logits whose softmax puts probability ``p`` on each frame's class."""
    probs = torch.full((len(frames), classes), (1 - p) / (classes - 1))
    probs[torch.arange(len(frames)), torch.tensor(frames)] = p
    return probs.log()[None]


def test_merges_repeats_and_drops_blanks() -> None:
    path = ctc_best_path(_logits([1, 1, 0, 1, 2, 2, 0, 0, 3]))[0]
    assert path.ids == [1, 1, 2, 3]
    assert path.char_probs == pytest.approx([0.9] * 4)
    assert path.confidence == pytest.approx(0.9)


def test_char_probability_is_the_run_maximum_and_confidence_the_minimum() -> None:
    probs = torch.full((4, 3), 0.05)
    probs[0, 1], probs[1, 1], probs[2, 0], probs[3, 2] = 0.6, 0.9, 0.9, 0.5
    probs /= probs.sum(-1, keepdim=True)
    path = ctc_best_path(probs.log()[None], log_probs=True)[0]
    assert path.ids == [1, 2]
    assert path.char_probs[0] == pytest.approx(0.9 / 1.0, rel=0.01)
    assert path.confidence == pytest.approx(min(path.char_probs))


def test_lengths_ignore_padding_and_empty_uses_blank_probability() -> None:
    logits = torch.cat([_logits([0, 0, 3, 3]), _logits([0, 0, 0, 0], p=0.8)])
    paths = ctc_best_path(logits, lengths=torch.tensor([2, 4]))
    assert paths[0].ids == [] and paths[0].confidence == pytest.approx(0.9)
    assert paths[1].ids == [] and paths[1].confidence == pytest.approx(0.8)
    assert ctc_best_path(logits)[0].ids == [3]
    with pytest.raises(ValueError):
        ctc_best_path(logits[0])
    with pytest.raises(ValueError):
        ctc_best_path(logits, lengths=[1, 2, 3])


def test_stitch_frames_takes_each_overlap_half_from_each_side() -> None:
    full = torch.arange(20.0)[:, None]
    a, b, c = full[0:10] + 100, full[6:16] + 200, full[12:20] + 300
    out = stitch_frames([a, b, c], [0, 6, 12])
    assert out.shape == (20, 1)
    src = (out[:, 0] // 100).long().tolist()
    assert src == [1] * 8 + [2] * 6 + [3] * 6  # cuts at (6+10)//2=8 and (12+16)//2=14
    assert torch.equal(out[:, 0] % 100, full[:, 0])
    assert torch.equal(stitch_frames([a], [0]), a)
