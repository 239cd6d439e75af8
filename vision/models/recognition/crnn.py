"""CRNN: a rectangular-stride MobileNetV3 backbone, a BiLSTM sequence encoder and a CTC head.

``forward(images: Tensor[N, 3, 32, W]) -> logits Tensor[N, W / 4, NUM_CLASSES]`` (batch first; class 0 is
the CTC blank, see :mod:`vision.models.recognition.vocab`). Images are float RGB in [0, 1]; ``W`` a multiple
of 4. The predictor owns resizing, batching and decoding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import Tensor, nn

from vision.models._registry import register_model
from vision.models.recognition.backbone import BackboneConfig, MobileNetV3Backbone
from vision.models.recognition.vocab import NUM_CLASSES
from vision.models.recognition.weights import CRNN_MOBILENET_SMALL

__all__ = ["CRNN", "CRNNConfig", "crnn_mobilenet_small"]


@dataclass(frozen=True)
class CRNNConfig:
    """CRNN shape: backbone, projection width, LSTM size/depth, dropout, number of classes (blank included)."""

    backbone: BackboneConfig = field(default_factory=BackboneConfig)
    proj: int = 256
    hidden: int = 160
    layers: int = 2
    dropout: float = 0.1
    num_classes: int = NUM_CLASSES
    height: int = 32


class CRNN(nn.Module):
    """Conv features -> linear projection -> BiLSTM -> per-column class logits (see module docstring)."""

    def __init__(self, config: CRNNConfig = CRNNConfig()) -> None:
        super().__init__()
        self.config = config
        self.backbone = MobileNetV3Backbone(config.backbone)
        self.proj = nn.Sequential(nn.Linear(self.backbone.out_channels, config.proj), nn.Hardswish())
        self.rnn = nn.LSTM(config.proj, config.hidden, num_layers=config.layers, batch_first=True,
                           bidirectional=True, dropout=config.dropout if config.layers > 1 else 0.0)
        self.dropout = nn.Dropout(config.dropout)
        self.head = nn.Linear(2 * config.hidden, config.num_classes)

    def _apply(self, fn, recurse=True):  # noqa: ANN001, ANN202 - nn.Module's signature
        """After a device or dtype move, put the LSTM weights back in one buffer: otherwise cuDNN compacts them
        on every call (and warns that it does)."""
        out = super()._apply(fn, recurse)
        self.rnn.flatten_parameters()
        return out

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(self.backbone(images))  # [N, T, proj]
        x, _ = self.rnn(x)  # [N, T, 2 * hidden]
        return self.head(self.dropout(x))  # [N, T, C]


_SMALL_BACKBONE = {"width_mult": 1.25, "blocks": "rect_late"}


@register_model("crnn_mobilenet_small", task="recognition", weights=CRNN_MOBILENET_SMALL, default=True)
def crnn_mobilenet_small(**overrides: object) -> CRNN:
    """The CPU default: MobileNetV3-small x1.25 (rectangular strides, the width halved late: ``rect_late``) +
    2-layer BiLSTM(160), 2.8M parameters.

    ``backbone`` may be given as a dict of :class:`BackboneConfig` fields (JSON training configs); fields it
    leaves out take the defaults above."""
    backbone = overrides.get("backbone", {})
    if isinstance(backbone, dict):
        overrides["backbone"] = BackboneConfig(**{**_SMALL_BACKBONE, **backbone})  # type: ignore[arg-type]
    return CRNN(CRNNConfig(**overrides))  # type: ignore[arg-type]
