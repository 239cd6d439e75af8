"""Validation of a recognizer during training: a fixed synthetic set (steers nothing but the log) and a real
crop set read through the inference predictor (logged only: it must not steer training)."""

from __future__ import annotations

import torch

from vision.models.recognition.vocab import decode
from vision.ops.ctc import ctc_best_path

__all__ = ["validate", "validate_real"]


@torch.inference_mode()
def validate(model: torch.nn.Module, samples: list, device: torch.device, width: int) -> dict[str, float]:
    """Greedy-decode a fixed set of ``(crop, text)`` samples; word accuracy (both casings) and CER."""
    from vision.evaluation.recognition import score_texts
    from vision.training.synth.word_batches import collate_words

    model.eval()
    preds: list[str] = []
    for i in range(0, len(samples), 256):
        batch = collate_words(samples[i:i + 256], width)
        with torch.autocast(device.type, torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(batch.images.to(device).float() / 255)
        preds += [decode(p.ids) for p in ctc_best_path(logits)]
    s = score_texts(preds, [t for _, t in samples])
    return {"val_word_acc": s.word_accuracy, "val_word_acc_cased": s.word_accuracy_cased, "val_cer": s.cer}


def validate_real(model: torch.nn.Module, crops: tuple[list, list[str]], device: torch.device,
                  arch: str, width: int) -> dict[str, float]:
    """Read a real crop set through the inference predictor (its resizing and width buckets, greedy
    decoding) with ``model``; the scores are only logged: they must not steer training."""
    from vision.evaluation.recognition import score_texts
    from vision.predictors.recognition.predictor import RecognitionPredictor

    model.eval()
    reader = RecognitionPredictor(model, arch=arch, device=device, dtype=torch.float32, max_width=width,
                                  overlap=min(64, width // 2), rotate_tall=False)
    with torch.autocast(device.type, torch.bfloat16, enabled=device.type == "cuda"):
        preds = [text for text, _ in reader(crops[0])]
    s = score_texts(preds, crops[1])
    return {"real_word_acc": s.word_accuracy, "real_word_acc_cased": s.word_accuracy_cased, "real_cer": s.cer}
