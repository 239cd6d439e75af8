"""CRNN: a rectangular-stride MobileNetV3 backbone, a BiLSTM sequence encoder and a CTC head.

``forward(images: Tensor[N, 3, 32, W]) -> logits Tensor[N, W / 4, NUM_CLASSES]`` (batch first; class 0 is
the CTC blank, see :mod:`vision.models.recognition.vocab`). Images are float RGB in [0, 1]; ``W`` a multiple
of 4. The predictor owns resizing, batching and decoding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
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


def recurrent_trunk(in_channels: int, proj: int, hidden: int, layers: int,
                    dropout: float) -> tuple[nn.Sequential, nn.LSTM]:
    """The CRNN's projection (Linear + Hardswish) and BiLSTM; the hybrid Transformer builds the same layers
    under the same names, so a CRNN's weights load into it."""
    return (nn.Sequential(nn.Linear(in_channels, proj), nn.Hardswish()),
            nn.LSTM(proj, hidden, num_layers=layers, batch_first=True, bidirectional=True,
                    dropout=dropout if layers > 1 else 0.0))


def flatten_lstm(rnn: nn.LSTM) -> None:
    """Put ``rnn``'s weights in the one buffer cuDNN reads, bfloat16 included.

    ``nn.LSTM.flatten_parameters`` skips weights whose dtype ``torch.backends.cudnn.is_acceptable`` does not
    list (bfloat16 among them), yet cuDNN runs bfloat16 LSTMs: left as they are, the weights are copied into
    a new buffer on every call, with a warning. Same flattening call as ``flatten_parameters``."""
    rnn.flatten_parameters()
    weights = rnn._flat_weights
    if not weights or not all(isinstance(w, torch.Tensor) and w.is_cuda and w.dtype == torch.bfloat16
                              for w in weights):
        return
    if not torch.backends.cudnn.enabled or len({w.data_ptr() for w in weights}) != len(weights):
        return
    from torch.backends.cudnn import rnn as cudnn_rnn

    with torch.cuda.device_of(weights[0]), torch.no_grad():
        torch._cudnn_rnn_flatten_weight(weights, 4 if rnn.bias else 2, rnn.input_size,
                                        cudnn_rnn.get_cudnn_mode(rnn.mode), rnn.hidden_size, rnn.proj_size,
                                        rnn.num_layers, rnn.batch_first, bool(rnn.bidirectional))


class FlatLSTMModule(nn.Module):
    """A module whose ``rnn`` (an ``nn.LSTM``, or ``None``) keeps its weights in one buffer after device or
    dtype moves: otherwise cuDNN compacts them on every call (and warns that it does)."""

    rnn: nn.LSTM | None

    def _apply(self, fn, recurse=True):  # untyped, as nn.Module's
        out = super()._apply(fn, recurse)
        if self.rnn is not None:
            flatten_lstm(self.rnn)
        return out


class CRNN(FlatLSTMModule):
    """Conv features -> linear projection -> BiLSTM -> per-column class logits (see module docstring)."""

    def __init__(self, config: CRNNConfig = CRNNConfig()) -> None:
        super().__init__()
        self.config = config
        self.backbone = MobileNetV3Backbone(config.backbone)
        self.proj, self.rnn = recurrent_trunk(self.backbone.out_channels, config.proj, config.hidden,
                                              config.layers, config.dropout)
        self.dropout = nn.Dropout(config.dropout)
        self.head = nn.Linear(2 * config.hidden, config.num_classes)

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
