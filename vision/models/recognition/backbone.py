"""A MobileNetV3-small-like convolutional backbone with rectangular strides for text lines.

It halves the height five times (32 -> 1) but the width only twice, so a crop ``[N, 3, 32, W]`` becomes a
sequence ``[N, C, 1, W / 4]``: one feature column every 4 input pixels, enough for CTC to emit narrow
characters (``il1``) and repeated letters. Blocks are MobileNetV3 inverted residuals (depthwise conv,
squeeze-excitation, hard-swish; :mod:`vision.models.mobilenet_v3`), described by :class:`BlockSpec` rows so
variants are table rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from vision.models.mobilenet_v3 import BlockSpec, ConvBNAct, InvertedResidual, div8

__all__ = ["BLOCK_TABLES", "MOBILENET_V3_SMALL_RECT", "MOBILENET_V3_SMALL_RECT_LATE", "BackboneConfig", "BlockSpec",
           "MobileNetV3Backbone"]


# MobileNetV3-small (Howard et al. 2019, table 2) with strides (2, 1) where the original has 2 after the
# second block, so the width is only divided by 4 overall.
MOBILENET_V3_SMALL_RECT: tuple[BlockSpec, ...] = (
    BlockSpec(3, 16, 16, True, "relu", (2, 2)),
    BlockSpec(3, 72, 24, False, "relu", (2, 1)),
    BlockSpec(3, 88, 24, False, "relu", (1, 1)),
    BlockSpec(5, 96, 40, True, "hswish", (2, 1)),
    BlockSpec(5, 240, 40, True, "hswish", (1, 1)),
    BlockSpec(5, 240, 40, True, "hswish", (1, 1)),
    BlockSpec(5, 120, 48, True, "hswish", (1, 1)),
    BlockSpec(5, 144, 48, True, "hswish", (1, 1)),
    BlockSpec(5, 288, 96, True, "hswish", (2, 1)),
    BlockSpec(5, 576, 96, True, "hswish", (1, 1)),
    BlockSpec(5, 576, 96, True, "hswish", (1, 1)),
)

# The same blocks, but the second width halving moves from the first block to the ninth: blocks 1-8 see one
# column every 2 pixels instead of 4, so thin glyphs (``.,:;'il1``) keep their own columns through most of
# the network. Same parameters (weights of one table load into the other), about 1.5x the CPU time.
MOBILENET_V3_SMALL_RECT_LATE: tuple[BlockSpec, ...] = (
    BlockSpec(3, 16, 16, True, "relu", (2, 1)),
    *MOBILENET_V3_SMALL_RECT[1:8],
    BlockSpec(5, 288, 96, True, "hswish", (2, 2)),
    *MOBILENET_V3_SMALL_RECT[9:],
)

BLOCK_TABLES: dict[str, tuple[BlockSpec, ...]] = {
    "rect": MOBILENET_V3_SMALL_RECT,
    "rect_late": MOBILENET_V3_SMALL_RECT_LATE,
}


@dataclass(frozen=True)
class BackboneConfig:
    """Backbone shape: stem width, block table (a tuple or a :data:`BLOCK_TABLES` name, for JSON configs),
    width multiplier and the final 1x1 conv width."""

    stem: int = 16
    blocks: tuple[BlockSpec, ...] | str = MOBILENET_V3_SMALL_RECT
    width_mult: float = 1.0
    out_channels: int = 576

    def __post_init__(self) -> None:
        if isinstance(self.blocks, str):
            if self.blocks not in BLOCK_TABLES:
                raise ValueError(f"unknown block table {self.blocks!r}; known: {sorted(BLOCK_TABLES)}")
            object.__setattr__(self, "blocks", BLOCK_TABLES[self.blocks])


class MobileNetV3Backbone(nn.Module):
    """``[N, 3, 32, W]`` float in [0, 1] -> feature sequence ``[N, W / 4, out_channels]``.

    The input is normalised to [-1, 1] inside, so every caller (predictor, training, ONNX) feeds the same
    range. Heights other than 32 work if divisible by 32; the remaining rows are averaged away.
    """

    def __init__(self, config: BackboneConfig = BackboneConfig()) -> None:
        super().__init__()
        stem = div8(config.stem * config.width_mult)
        layers: list[nn.Module] = [ConvBNAct(3, stem, 3, stride=2)]
        cin = stem
        for spec in config.blocks:
            block = InvertedResidual(cin, spec, config.width_mult)
            layers.append(block)
            cin = block.out_channels
        layers.append(ConvBNAct(cin, config.out_channels, 1))
        self.features = nn.Sequential(*layers)
        self.out_channels = config.out_channels

    def forward(self, images: Tensor) -> Tensor:
        x = self.features(images * 2.0 - 1.0)  # [N, C, H / 32, W / 4]
        return x.mean(2).transpose(1, 2)  # [N, W / 4, C]
