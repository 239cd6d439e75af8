"""Frame-level CTC distillation: the loss, and the training step that adds it to the CTC loss."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from vision.training.losses import ctc_distillation


def test_distillation_is_zero_for_the_teacher_itself_and_positive_otherwise() -> None:
    teacher = torch.randn(3, 12, 7)
    lengths = torch.tensor([2, 5, 1])
    assert ctc_distillation(teacher.clone(), teacher, lengths).abs().item() < 1e-6
    assert ctc_distillation(torch.randn(3, 12, 7), teacher, lengths).item() > 0


def test_distillation_matches_the_kl_definition() -> None:
    """Sum over frames of KL(teacher || student) at temperature T, / target length, batch mean, x T^2."""
    student, teacher = torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    lengths, t = torch.tensor([1, 4]), 2.0
    p = F.softmax(teacher / t, -1)
    kl = (p * (p.log() - F.log_softmax(student / t, -1))).sum(-1).sum(-1)
    expected = (kl / lengths).mean() * t * t
    assert torch.allclose(ctc_distillation(student, teacher, lengths, temperature=t), expected, atol=1e-6)


def test_distillation_gradient_reaches_only_the_student() -> None:
    student = torch.randn(2, 6, 5, requires_grad=True)
    teacher = torch.randn(2, 6, 5, requires_grad=True)
    ctc_distillation(student, teacher, torch.tensor([3, 3])).backward()
    assert student.grad is not None and student.grad.abs().sum() > 0
    assert teacher.grad is None


def test_distillation_rejects_mismatched_frames_and_bad_temperature() -> None:
    with pytest.raises(ValueError, match="frames differ"):
        ctc_distillation(torch.randn(1, 8, 5), torch.randn(1, 6, 5), torch.tensor([1]))
    with pytest.raises(ValueError, match="temperature"):
        ctc_distillation(torch.randn(1, 8, 5), torch.randn(1, 8, 5), torch.tensor([1]), temperature=0)


def test_training_step_adds_the_weighted_distillation_term() -> None:
    """``_forward_backward`` with a teacher: CTC + ``distill_weight`` x KL; a teacher identical to the student
    adds nothing (same weights, same frames)."""
    from vision.models import get_model
    from vision.training.losses import ctc_loss
    from vision.training.recognition import RecognitionTrainConfig, _forward_backward

    torch.manual_seed(0)
    student = get_model("crnn_mobilenet_small", weights=None, hidden=16, proj=32).eval()
    other = get_model("crnn_mobilenet_small", weights=None, hidden=16, proj=32).eval()
    twin = get_model("crnn_mobilenet_small", weights=None, hidden=16, proj=32).eval()
    twin.load_state_dict(student.state_dict())
    images = torch.rand(2, 3, 32, 64)
    batch = SimpleNamespace(targets=torch.tensor([[5, 6, 0], [7, 8, 9]]), lengths=torch.tensor([2, 3]))
    opt = torch.optim.SGD(student.parameters(), lr=0.0)
    cfg = RecognitionTrainConfig(distill_weight=0.5, distill_temperature=2.0)
    cpu = torch.device("cpu")
    with torch.no_grad():
        logits = student(images)
        ctc = ctc_loss(logits, batch.targets, batch.lengths)
        kl = ctc_distillation(logits, other(images), batch.lengths, temperature=2.0)
    assert torch.allclose(_forward_backward(student, images, batch, opt, cpu, cfg), ctc, atol=1e-5)
    assert torch.allclose(_forward_backward(student, images, batch, opt, cpu, cfg, twin), ctc, atol=1e-5)
    distilled = _forward_backward(student, images, batch, opt, cpu, cfg, other)
    assert torch.allclose(distilled, ctc + 0.5 * kl, atol=1e-5)
    assert kl > 0
