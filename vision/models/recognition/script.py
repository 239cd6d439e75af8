"""The script classifier's network: which writing system a word crop is in (a tiny CNN).

The recognizers read Latin script; given Cyrillic, Greek, Arabic or Chinese they still emit Latin letters.
:class:`ScriptCNN` gives the probability of each of :data:`SCRIPTS` for a grey ``32 x WIDTH`` crop; the
predictor around it (pre-processing, batching, the flagging rule) is :mod:`vision.predictors.recognition.script`.

Weights: ``vision/models/weights/script_cnn.safetensors`` (trained on synthetic crops only by
``vision.training.script_classifier``; ~45k parameters, fp16 storage).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

__all__ = ["SCRIPTS", "WEIGHTS", "WIDTH", "ScriptCNN"]

SCRIPTS = ("Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "CJK", "Devanagari", "Thai", "Armenian", "Georgian")
WIDTH = 128
WEIGHTS = Path(__file__).resolve().parents[1] / "weights" / "script_cnn.safetensors"


class ScriptCNN(nn.Module):
    """Four conv blocks (32 -> 2 rows), global average pooling, a linear layer over :data:`SCRIPTS`."""

    def __init__(self, classes: int = len(SCRIPTS), width: int = 24) -> None:
        super().__init__()
        chans = [1, width // 2, width, 2 * width, 3 * width]
        layers: list[nn.Module] = []
        for i in range(4):
            layers += [nn.Conv2d(chans[i], chans[i + 1], 3, padding=1, bias=False), nn.BatchNorm2d(chans[i + 1]),
                       nn.ReLU(inplace=True), nn.MaxPool2d(2 if i < 3 else (2, 1))]
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(chans[-1], classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x [N, 1, 32, W]`` float in [0, 1], dark text on light (see :func:`prepare`) -> logits ``[N, C]``."""
        return self.head(self.features(x - 0.5).mean(dim=(2, 3)))
