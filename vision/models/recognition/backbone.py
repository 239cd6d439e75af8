"""A MobileNetV3-small-like convolutional backbone with rectangular strides for text lines.

It halves the height five times (32 -> 1) but the width only twice, so a crop ``[N, 3, 32, W]`` becomes a
sequence ``[N, C, 1, W / 4]``: one feature column every 4 input pixels, enough for CTC to emit narrow
characters (``il1``) and repeated letters. Blocks are MobileNetV3 inverted residuals (depthwise conv,
squeeze-excitation, hard-swish), described by :class:`BlockSpec` rows so variants are table rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

__all__ = ["BLOCK_TABLES", "MOBILENET_V3_SMALL_RECT", "MOBILENET_V3_SMALL_RECT_LATE", "BackboneConfig", "BlockSpec",
           "MobileNetV3Backbone"]


@dataclass(frozen=True)
class BlockSpec:
    """One inverted residual: kernel, expanded channels, output channels, SE, activation, (stride_h, stride_w)."""

    kernel: int
    expand: int
    out: int
    se: bool
    act: str  # "relu" | "hswish"
    stride: tuple[int, int]


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


def _div8(c: float) -> int:
    """Round channels to a multiple of 8 (not below 90% of ``c``), as MobileNet does for fast kernels."""
    v = max(8, int(c + 4) // 8 * 8)
    return v + 8 if v < 0.9 * c else v


def _act(name: str) -> nn.Module:
    return nn.Hardswish() if name == "hswish" else nn.ReLU()


class _ConvBNAct(nn.Sequential):
    def __init__(self, cin: int, cout: int, k: int, stride: tuple[int, int] | int = 1, groups: int = 1,
                 act: str | None = "hswish") -> None:
        layers: list[nn.Module] = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
                                   nn.BatchNorm2d(cout)]
        if act is not None:
            layers.append(_act(act))
        super().__init__(*layers)


class _SqueezeExcite(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        hidden = _div8(channels / 4)
        self.fc1 = nn.Conv2d(channels, hidden, 1)
        self.fc2 = nn.Conv2d(hidden, channels, 1)

    def forward(self, x: Tensor) -> Tensor:
        s = x.mean((2, 3), keepdim=True)  # [N, C, 1, 1]
        return x * nn.functional.hardsigmoid(self.fc2(nn.functional.relu(self.fc1(s))))


class _InvertedResidual(nn.Module):
    def __init__(self, cin: int, spec: BlockSpec, width_mult: float) -> None:
        super().__init__()
        exp, cout = _div8(spec.expand * width_mult), _div8(spec.out * width_mult)
        layers: list[nn.Module] = []
        if exp != cin:
            layers.append(_ConvBNAct(cin, exp, 1, act=spec.act))
        layers.append(_ConvBNAct(exp, exp, spec.kernel, spec.stride, groups=exp, act=spec.act))
        if spec.se:
            layers.append(_SqueezeExcite(exp))
        layers.append(_ConvBNAct(exp, cout, 1, act=None))
        self.block = nn.Sequential(*layers)
        self.residual = spec.stride == (1, 1) and cin == cout
        self.out_channels = cout

    def forward(self, x: Tensor) -> Tensor:
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetV3Backbone(nn.Module):
    """``[N, 3, 32, W]`` float in [0, 1] -> feature sequence ``[N, W / 4, out_channels]``.

    The input is normalised to [-1, 1] inside, so every caller (predictor, training, ONNX) feeds the same
    range. Heights other than 32 work if divisible by 32; the remaining rows are averaged away.
    """

    def __init__(self, config: BackboneConfig = BackboneConfig()) -> None:
        super().__init__()
        stem = _div8(config.stem * config.width_mult)
        layers: list[nn.Module] = [_ConvBNAct(3, stem, 3, stride=2)]
        cin = stem
        for spec in config.blocks:
            block = _InvertedResidual(cin, spec, config.width_mult)
            layers.append(block)
            cin = block.out_channels
        layers.append(_ConvBNAct(cin, config.out_channels, 1))
        self.features = nn.Sequential(*layers)
        self.out_channels = config.out_channels

    def forward(self, images: Tensor) -> Tensor:
        x = self.features(images * 2.0 - 1.0)  # [N, C, H / 32, W / 4]
        return x.mean(2).transpose(1, 2)  # [N, W / 4, C]
