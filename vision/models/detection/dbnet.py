"""DBNet-style text detector: MobileNetV3-large or ResNet backbone, FPN neck, probability and threshold heads.

Liao et al., "Real-time Scene Text Detection with Differentiable Binarization" (AAAI 2020). Backbones have
torchvision's layout and no downloaded weights (we train everything ourselves): MobileNetV3-large from
:mod:`vision.models.mobilenet_v3`, the ResNets from torchvision. Images go in as
``float[N, 3, H, W]`` normalised RGB with ``H`` and ``W`` multiples of 32; maps come out at full
resolution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from vision.models._registry import register_model
from vision.models.detection._weights import DEFAULT_WEIGHTS
from vision.models.mobilenet_v3 import mobilenet_v3_large_features

__all__ = [
    "DBNetConfig",
    "DBNet",
    "DBOutput",
    "DBProbability",
    "CONFIGS",
    "db_mobilenet_v3_large",
    "db_mobilenet_v3_large_photo",
    "db_resnet18",
    "db_resnet34",
]


@dataclass(frozen=True)
class DBNetConfig:
    """Architecture of one DBNet variant.

    Attributes:
        backbone: ``"mobilenet_v3_large"``, ``"resnet18"`` or ``"resnet34"`` (torchvision, weights=None).
        neck_channels: FPN width; each of the 4 levels contributes ``neck_channels // 4`` to the fused map.
        head_channels: width of the two upsampling heads.
        mean, std: input normalisation (RGB in [0, 1]); part of the model's contract with its predictor.
    """

    backbone: str = "mobilenet_v3_large"
    neck_channels: int = 96
    head_channels: int = 24
    mean: tuple[float, float, float] = (0.5, 0.5, 0.5)
    std: tuple[float, float, float] = (0.25, 0.25, 0.25)


CONFIGS: dict[str, DBNetConfig] = {
    # 96/24 rather than 128/32: the stride-4 3x3 convs dominate CPU time; 0.33 s vs 0.38 s per 1024x768 page
    # on 2 cores (measured), for 0.1M fewer parameters.
    "db_mobilenet_v3_large": DBNetConfig("mobilenet_v3_large", neck_channels=96, head_channels=24),
    "db_mobilenet_v3_large_photo": DBNetConfig("mobilenet_v3_large", neck_channels=96, head_channels=24),
    "db_resnet18": DBNetConfig("resnet18", neck_channels=256, head_channels=64),
    "db_resnet34": DBNetConfig("resnet34", neck_channels=256, head_channels=64),
}


class DBOutput(NamedTuple):
    """``logits float[N, 1, H, W]`` (text probability before the sigmoid) and ``thresh float[N, 1, H, W]``
    (the learned binarization threshold in [0, 1])."""

    logits: Tensor
    thresh: Tensor


def _backbone(name: str) -> tuple[nn.ModuleList, list[int]]:
    """Four stages with outputs at strides 4, 8, 16 and 32, and their channel counts."""
    if name == "mobilenet_v3_large":  # torchvision's layout, built without importing torchvision
        f = mobilenet_v3_large_features()
        # stage ends: f[3] stride 4 (24 ch), [6] stride 8 (40), [12] stride 16 (112), [15] stride 32 (160)
        stages = [f[:4], f[4:7], f[7:13], f[13:16]]
        return nn.ModuleList(stages), [24, 40, 112, 160]
    if name in ("resnet18", "resnet34"):
        from torchvision import models as tvm  # here, not at import: it loads torch._dynamo

        r = getattr(tvm, name)(weights=None)
        stem = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1)
        return nn.ModuleList([stem, r.layer2, r.layer3, r.layer4]), [64, 128, 256, 512]
    raise ValueError(f"unknown backbone {name!r}")


def _conv_bn_relu(cin: int, cout: int, k: int = 3) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class FPN(nn.Module):
    """Top-down feature pyramid fused at stride 4: ``[C4, C8, C16, C32] -> float[N, C, H/4, W/4]``."""

    def __init__(self, in_channels: list[int], channels: int) -> None:
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, channels, 1, bias=False) for c in in_channels)
        self.smooth = nn.ModuleList(_conv_bn_relu(channels, channels // 4) for _ in in_channels)

    def forward(self, feats: list[Tensor]) -> Tensor:
        lat = [conv(f) for conv, f in zip(self.lateral, feats)]
        for i in range(len(lat) - 2, -1, -1):  # top-down: add the upsampled coarser level
            lat[i] = lat[i] + F.interpolate(lat[i + 1], size=lat[i].shape[-2:], mode="nearest")
        size = lat[0].shape[-2:]
        outs = [
            F.interpolate(s(x), size=size, mode="nearest") if i else s(x)
            for i, (s, x) in enumerate(zip(self.smooth, lat))
        ]
        return torch.cat(outs, dim=1)


def _head(cin: int, mid: int) -> nn.Sequential:
    """Stride-4 features to one full-resolution map (conv, then two x2 transposed convolutions)."""
    return nn.Sequential(
        _conv_bn_relu(cin, mid),
        nn.ConvTranspose2d(mid, mid, 2, stride=2, bias=False),
        nn.BatchNorm2d(mid),
        nn.ReLU(inplace=True),
        nn.ConvTranspose2d(mid, 1, 2, stride=2),
    )


class DBNet(nn.Module):
    """``forward(images float[N, 3, H, W]) -> DBOutput`` (both maps ``float[N, 1, H, W]``)."""

    def __init__(self, config: DBNetConfig) -> None:
        super().__init__()
        self.config = config
        self.stages, chans = _backbone(config.backbone)
        self.neck = FPN(chans, config.neck_channels)
        self.prob_head = _head(config.neck_channels, config.head_channels)
        self.thresh_head = _head(config.neck_channels, config.head_channels)
        nn.init.constant_(self.prob_head[-1].bias, -2.0)  # start near "no text" (most pixels are background)

    def features(self, images: Tensor) -> Tensor:
        """Fused stride-4 features ``float[N, neck_channels, H/4, W/4]``."""
        feats, x = [], images
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        return self.neck(feats)

    def forward(self, images: Tensor) -> DBOutput:
        fused = self.features(images)
        return DBOutput(self.prob_head(fused), torch.sigmoid(self.thresh_head(fused)))


class DBProbability(nn.Module):
    """Inference view of a :class:`DBNet`: ``float[N, 3, H, W] -> float[N, 1, H, W]`` text probabilities.

    Skips the threshold head (training-only) and applies the sigmoid; this is the module that the fast
    paths (bf16, compile, int8, ONNX) transform.
    """

    def __init__(self, model: DBNet) -> None:
        super().__init__()
        self.model = model

    def forward(self, images: Tensor) -> Tensor:
        return torch.sigmoid(self.model.prob_head(self.model.features(images)).float())


def _build(name: str, **overrides: object) -> DBNet:
    from dataclasses import replace

    return DBNet(replace(CONFIGS[name], **overrides))  # type: ignore[arg-type]


@register_model(
    "db_mobilenet_v3_large",
    task="detection",
    weights=DEFAULT_WEIGHTS.get("db_mobilenet_v3_large"),
    default=True,
)
def db_mobilenet_v3_large(**overrides: object) -> DBNet:
    """DBNet on MobileNetV3-large (the CPU default)."""
    return _build("db_mobilenet_v3_large", **overrides)


@register_model(
    "db_mobilenet_v3_large_photo",
    task="detection",
    weights=DEFAULT_WEIGHTS.get("db_mobilenet_v3_large_photo"),
)
def db_mobilenet_v3_large_photo(**overrides: object) -> DBNet:
    """The CPU default's network fine-tuned on photos (scenes, screens, photographed documents): the detector
    of pages the OCR's ``photo`` gate calls photos (:mod:`vision.pipelines.ocr.photo`)."""
    return _build("db_mobilenet_v3_large_photo", **overrides)


@register_model("db_resnet18", task="detection", weights=DEFAULT_WEIGHTS.get("db_resnet18"))
def db_resnet18(**overrides: object) -> DBNet:
    """DBNet on ResNet-18 (a larger GPU option)."""
    return _build("db_resnet18", **overrides)


@register_model("db_resnet34", task="detection", weights=DEFAULT_WEIGHTS.get("db_resnet34"))
def db_resnet34(**overrides: object) -> DBNet:
    """DBNet on ResNet-34 (a larger GPU option)."""
    return _build("db_resnet34", **overrides)
