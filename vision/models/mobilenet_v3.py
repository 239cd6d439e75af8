"""MobileNetV3 building blocks (Howard et al., "Searching for MobileNetV3", ICCV 2019), in torchvision's layout.

The recognizer's rectangular-stride backbone (:mod:`vision.models.recognition.backbone`) and the detector's
MobileNetV3-large (:mod:`vision.models.detection.dbnet`) are stacks of these blocks. The module names and
nesting are torchvision's (``features.N.block.M.0.weight``, ``fc1``/``fc2`` in the squeeze-excitation), so a
state dict of ``torchvision.models.mobilenet_v3_large().features`` loads unchanged and computes the same
(``tests/models/test_mobilenet_v3.py``). Building the detector from here keeps ``torchvision`` out of the
inference processes: importing it loads ``torch._dynamo`` and Triton, one to several seconds of every
process's start-up (``docs/benchmarks.md``, *Start-up of GPU processes*).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

__all__ = ["MOBILENET_V3_LARGE", "BlockSpec", "ConvBNAct", "InvertedResidual", "SqueezeExcite", "div8",
           "mobilenet_v3_large_features"]

TORCHVISION_BN = {"eps": 0.001, "momentum": 0.01}
"""BatchNorm settings of torchvision's MobileNetV3 (the recognizer's blocks use PyTorch's defaults)."""


@dataclass(frozen=True)
class BlockSpec:
    """One inverted residual: kernel, expanded channels, output channels, SE, activation, (stride_h, stride_w)."""

    kernel: int
    expand: int
    out: int
    se: bool
    act: str  # "relu" | "hswish"
    stride: tuple[int, int]


# MobileNetV3-large (table 1 of the paper; torchvision's ``_mobilenet_v3_conf("mobilenet_v3_large")``).
MOBILENET_V3_LARGE: tuple[BlockSpec, ...] = (
    BlockSpec(3, 16, 16, False, "relu", (1, 1)),
    BlockSpec(3, 64, 24, False, "relu", (2, 2)),
    BlockSpec(3, 72, 24, False, "relu", (1, 1)),
    BlockSpec(5, 72, 40, True, "relu", (2, 2)),
    BlockSpec(5, 120, 40, True, "relu", (1, 1)),
    BlockSpec(5, 120, 40, True, "relu", (1, 1)),
    BlockSpec(3, 240, 80, False, "hswish", (2, 2)),
    BlockSpec(3, 200, 80, False, "hswish", (1, 1)),
    BlockSpec(3, 184, 80, False, "hswish", (1, 1)),
    BlockSpec(3, 184, 80, False, "hswish", (1, 1)),
    BlockSpec(3, 480, 112, True, "hswish", (1, 1)),
    BlockSpec(3, 672, 112, True, "hswish", (1, 1)),
    BlockSpec(5, 672, 160, True, "hswish", (2, 2)),
    BlockSpec(5, 960, 160, True, "hswish", (1, 1)),
    BlockSpec(5, 960, 160, True, "hswish", (1, 1)),
)


def div8(c: float) -> int:
    """Round channels to a multiple of 8 (not below 90% of ``c``), as MobileNet does for fast kernels."""
    v = max(8, int(c + 4) // 8 * 8)
    return v + 8 if v < 0.9 * c else v


def _act(name: str) -> nn.Module:
    return nn.Hardswish() if name == "hswish" else nn.ReLU()


class ConvBNAct(nn.Sequential):
    """Convolution (no bias), BatchNorm (``bn``: its keyword arguments), optional activation: torchvision's
    ``Conv2dNormActivation``."""

    def __init__(self, cin: int, cout: int, k: int, stride: tuple[int, int] | int = 1, groups: int = 1,
                 act: str | None = "hswish", bn: dict | None = None) -> None:
        layers: list[nn.Module] = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
                                   nn.BatchNorm2d(cout, **(bn or {}))]
        if act is not None:
            layers.append(_act(act))
        super().__init__(*layers)


class SqueezeExcite(nn.Module):
    """Channel gates from the spatial mean: ``x * hardsigmoid(fc2(relu(fc1(mean(x)))))``."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        hidden = div8(channels / 4)
        self.fc1 = nn.Conv2d(channels, hidden, 1)
        self.fc2 = nn.Conv2d(hidden, channels, 1)

    def forward(self, x: Tensor) -> Tensor:
        s = x.mean((2, 3), keepdim=True)  # [N, C, 1, 1]
        return x * nn.functional.hardsigmoid(self.fc2(nn.functional.relu(self.fc1(s))))


class InvertedResidual(nn.Module):
    """Expand (1x1), depthwise, optional squeeze-excitation, project (1x1); residual when shapes allow."""

    def __init__(self, cin: int, spec: BlockSpec, width_mult: float = 1.0, bn: dict | None = None) -> None:
        super().__init__()
        exp, cout = div8(spec.expand * width_mult), div8(spec.out * width_mult)
        layers: list[nn.Module] = []
        if exp != cin:
            layers.append(ConvBNAct(cin, exp, 1, act=spec.act, bn=bn))
        layers.append(ConvBNAct(exp, exp, spec.kernel, spec.stride, groups=exp, act=spec.act, bn=bn))
        if spec.se:
            layers.append(SqueezeExcite(exp))
        layers.append(ConvBNAct(exp, cout, 1, act=None, bn=bn))
        self.block = nn.Sequential(*layers)
        self.residual = spec.stride == (1, 1) and cin == cout
        self.out_channels = cout

    def forward(self, x: Tensor) -> Tensor:
        y = self.block(x)
        return x + y if self.residual else y


def mobilenet_v3_large_features() -> nn.Sequential:
    """The 16 feature blocks of MobileNetV3-large (stem at stride 2, then :data:`MOBILENET_V3_LARGE`) as
    ``torchvision.models.mobilenet_v3_large(weights=None).features[:16]`` lays them out, without its
    final 1x1 expansion to 960 channels (classification only)."""
    layers: list[nn.Module] = [ConvBNAct(3, 16, 3, stride=2, bn=TORCHVISION_BN)]
    cin = 16
    for spec in MOBILENET_V3_LARGE:
        block = InvertedResidual(cin, spec, bn=TORCHVISION_BN)
        layers.append(block)
        cin = block.out_channels
    return nn.Sequential(*layers)
