"""CRNN with a Transformer sequence encoder built on ``F.scaled_dot_product_attention``.

Same contract as :mod:`vision.models.recognition.crnn`: ``forward(images: Tensor[N, 3, 32, W]) -> logits
Tensor[N, W / 4, NUM_CLASSES]`` (batch first, class 0 = CTC blank), float RGB in [0, 1]. Positions are given
by a depthwise 1-D convolution over the sequence (a conditional positional encoding), so any width works
without a learned table, and ONNX export stays simple. An optional ``key_padding`` mask (``[N, T]``, True
on padded columns) keeps attention off the padding of bucketed batches. ``window > 0`` makes attention local:
each frame attends to the frames within ``window`` of it (a band mask), as SVTR's local mixing does, so
marks far along the crop (slivers of neighbours, rules, specks) reach a frame only through the stacked
blocks, as in a recurrent reader.

With ``rnn_hidden > 0`` the encoder is a hybrid: the default CRNN's trunk (projection + BiLSTM, same module
names, so its weights load as they are) and then Transformer blocks at width ``2 * rnn_hidden`` whose output
projections start at zero. A fresh hybrid built on the CRNN's weights therefore computes exactly the CRNN, and
training the blocks adds whole-word context on top of the recurrent reading instead of replacing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from vision.models._registry import register_model
from vision.models.recognition.backbone import BackboneConfig, MobileNetV3Backbone
from vision.models.recognition.crnn import FlatLSTMModule, recurrent_trunk
from vision.models.recognition.vocab import NUM_CLASSES
from vision.models.recognition.weights import CRNN_TRANSFORMER_SMALL

__all__ = ["TransformerConfig", "TransformerRecognizer", "crnn_transformer_small"]


_BACKBONE = {"width_mult": 1.25, "blocks": "rect_late", "out_channels": 576}  # the default CRNN's backbone


@dataclass(frozen=True)
class TransformerConfig:
    """Backbone, model width, depth, heads, MLP ratio, dropout and number of classes (blank included)."""

    backbone: BackboneConfig = field(default_factory=lambda: BackboneConfig(**_BACKBONE))
    dim: int = 256
    depth: int = 4
    heads: int = 8
    mlp_ratio: float = 4.0
    dropout: float = 0.1
    num_classes: int = NUM_CLASSES
    height: int = 32
    rnn_hidden: int = 0  # > 0: hybrid (module docstring); ``dim`` is then the BiLSTM's input width
    rnn_layers: int = 2
    window: int = 0  # > 0: each frame attends only to frames at most this far away (band mask)


class _Block(nn.Module):
    """Pre-norm encoder layer: SDPA self-attention + GELU MLP, each with a residual."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float, dropout: float,
                 zero_init: bool = False) -> None:
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim))
        if zero_init:  # both residual branches start as zero: the block starts as the identity
            for layer in (self.out, self.mlp[-1]):
                nn.init.zeros_(layer.weight)
                nn.init.zeros_(layer.bias)

    def forward(self, x: Tensor, mask: Tensor | None) -> Tensor:
        n, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(n, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                           dropout_p=self.dropout if self.training else 0.0)  # [N, h, T, d/h]
        x = x + self.out(a.transpose(1, 2).reshape(n, t, d))
        return x + self.mlp(self.norm2(x))


class TransformerRecognizer(FlatLSTMModule):
    """Conv features -> projection + positional conv (or the CRNN's BiLSTM) -> SDPA blocks -> class logits."""

    def __init__(self, config: TransformerConfig = TransformerConfig()) -> None:
        super().__init__()
        self.config = config
        self.backbone = MobileNetV3Backbone(config.backbone)
        hybrid = config.rnn_hidden > 0
        width = 2 * config.rnn_hidden if hybrid else config.dim
        self.rnn = None
        if hybrid:  # the CRNN's names and layers, so its weights load
            self.proj: nn.Module
            self.proj, self.rnn = recurrent_trunk(self.backbone.out_channels, config.dim, config.rnn_hidden,
                                                  config.rnn_layers, config.dropout)
        else:
            self.proj = nn.Linear(self.backbone.out_channels, config.dim)
            self.pos = nn.Conv1d(config.dim, config.dim, 5, padding=2, groups=config.dim)
        self.blocks = nn.ModuleList(
            _Block(width, config.heads, config.mlp_ratio, config.dropout, zero_init=hybrid)
            for _ in range(config.depth))
        self.norm: nn.Module = nn.Identity() if hybrid else nn.LayerNorm(width)
        self.head = nn.Linear(width, config.num_classes)

    def forward(self, images: Tensor, key_padding: Tensor | None = None) -> Tensor:
        x = self.proj(self.backbone(images))  # [N, T, D]
        if self.rnn is not None:
            x, _ = self.rnn(x)  # [N, T, 2 * rnn_hidden]
        else:
            x = x + self.pos(x.transpose(1, 2)).transpose(1, 2)
        mask = None
        if key_padding is not None:  # [N, T] True = padding -> additive-free boolean "may attend" mask
            mask = (~key_padding)[:, None, None, :]  # [N, 1, 1, T]
        if self.config.window > 0:
            pos = torch.arange(x.shape[1], device=x.device)
            band = (pos[:, None] - pos[None, :]).abs() <= self.config.window  # [T, T]
            mask = band if mask is None else mask & band
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.norm(x))  # [N, T, C]


@register_model("crnn_transformer_small", task="recognition", weights=CRNN_TRANSFORMER_SMALL)
def crnn_transformer_small(**overrides: object) -> TransformerRecognizer:
    """MobileNetV3-small features (the default CRNN's backbone, so its weights warm-start this one) + a
    4-layer SDPA Transformer (d=256), 4.8M parameters.

    ``backbone`` may be given as a dict of :class:`BackboneConfig` fields (JSON training configs); fields it
    leaves out take the defaults above."""
    backbone = overrides.get("backbone")
    if isinstance(backbone, dict):
        overrides["backbone"] = BackboneConfig(**{**_BACKBONE, **backbone})  # type: ignore[arg-type]
    return TransformerRecognizer(TransformerConfig(**overrides))  # type: ignore[arg-type]
