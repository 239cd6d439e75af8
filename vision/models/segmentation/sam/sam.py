"""Segment Anything: config, model and registered builders (``sam_vit_b``, ``sam_vit_l``, ``sam_vit_h``).

No weights ship (the official checkpoints are 375 MB to 2.5 GB): load them with
:func:`vision.predictors.segmentation.checkpoint.load_sam`. ``sam_test`` is a tiny architecture for fast tests.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from torch import Tensor, nn

from vision.models._registry import register_model
from vision.models.segmentation.sam.image_encoder import EncoderConfig, ImageEncoderViT
from vision.models.segmentation.sam.mask_decoder import MaskDecoder, TwoWayTransformer
from vision.models.segmentation.sam.prompt_encoder import PromptEncoder

__all__ = ["CONFIGS", "Sam", "SamConfig", "SamOutput", "build_sam", "sam_test", "sam_vit_b", "sam_vit_h", "sam_vit_l"]


@dataclass(frozen=True)
class SamConfig:
    """Every size of a SAM model; the official variants differ only in ``encoder``.

    Attributes:
        encoder: the ViT image encoder.
        prompt_embed_dim: width of prompt tokens, image embedding and decoder (256).
        mask_in_chans: hidden channels of the mask-input downscaler (16).
        decoder_depth / decoder_heads / decoder_mlp_dim: the two-way transformer (2, 8, 2048).
        num_multimask_outputs: ambiguity masks per prompt (3).
        iou_head_depth / iou_head_hidden_dim: the IoU prediction MLP (3, 256).
        pixel_mean / pixel_std: RGB normalisation applied by the predictor (0-255 scale).
    """

    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    prompt_embed_dim: int = 256
    mask_in_chans: int = 16
    decoder_depth: int = 2
    decoder_heads: int = 8
    decoder_mlp_dim: int = 2048
    num_multimask_outputs: int = 3
    iou_head_depth: int = 3
    iou_head_hidden_dim: int = 256
    pixel_mean: tuple[float, float, float] = (123.675, 116.28, 103.53)
    pixel_std: tuple[float, float, float] = (58.395, 57.12, 57.375)

    @property
    def image_size(self) -> int:
        return self.encoder.img_size

    @property
    def embedding_size(self) -> int:
        return self.encoder.img_size // self.encoder.patch_size


CONFIGS: dict[str, SamConfig] = {
    "vit_b": SamConfig(EncoderConfig(768, 12, 12, (2, 5, 8, 11))),
    "vit_l": SamConfig(EncoderConfig(1024, 24, 16, (5, 11, 17, 23))),
    "vit_h": SamConfig(EncoderConfig(1280, 32, 16, (7, 15, 23, 31))),
    # tiny, for tests: 256 px input (16 x 16 tokens, so 14-px windows pad), narrow decoder
    "test": SamConfig(EncoderConfig(64, 2, 2, (1,), img_size=256, out_chans=32), prompt_embed_dim=32,
                      mask_in_chans=8, decoder_mlp_dim=64, decoder_heads=2, iou_head_hidden_dim=32),
}


class SamOutput(NamedTuple):
    """Low-resolution mask logits ``(B, P, M, 4h, 4w)`` and predicted IoUs ``(B, P, M)``."""

    low_res_logits: Tensor
    iou_predictions: Tensor


class Sam(nn.Module):
    """Image encoder + prompt encoder + mask decoder, with the official checkpoints' parameter names."""

    def __init__(self, config: SamConfig) -> None:
        super().__init__()
        self.config = config
        e = config.embedding_size
        self.image_encoder = ImageEncoderViT(dataclasses.replace(config.encoder, out_chans=config.prompt_embed_dim))
        self.prompt_encoder = PromptEncoder(config.prompt_embed_dim, (e, e), (config.image_size, config.image_size),
                                            config.mask_in_chans)
        self.mask_decoder = MaskDecoder(
            config.prompt_embed_dim,
            TwoWayTransformer(config.decoder_depth, config.prompt_embed_dim, config.decoder_heads,
                              config.decoder_mlp_dim),
            config.num_multimask_outputs, config.iou_head_depth, config.iou_head_hidden_dim,
        )

    def encode(self, images: Tensor) -> Tensor:
        """``(B, 3, S, S)`` normalised, zero-padded images -> ``(B, C, S/16, S/16)`` embeddings."""
        return self.image_encoder(images)

    def decode(self, embeddings: Tensor, points: Tensor | None = None, labels: Tensor | None = None,
               boxes: Tensor | None = None, mask_inputs: Tensor | None = None, *, multimask: bool = True,
               image_index: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Masks for ``P`` prompts over already encoded images.

        Args:
            embeddings: ``(B, C, h, w)`` from :meth:`encode`.
            points, labels: ``(P, N, 2)`` input-frame pixel ``(x, y)`` and ``(P, N)`` labels (1, 0, -1 = pad).
            boxes: ``(P, 4)`` input-frame ``xyxy``; mask_inputs: ``(P, 1, 4h, 4w)`` logits.
            multimask: 3 ambiguity masks (``True``) or 1.
            image_index: ``(P,)`` image of each prompt (needed when ``B > 1``).

        Returns:
            ``(P, M, 4h, 4w)`` logits and ``(P, M)`` IoU predictions.
        """
        sparse, dense = self.prompt_encoder(None if points is None else (points, labels), boxes, mask_inputs)
        return self.mask_decoder(embeddings, self.prompt_encoder.get_dense_pe(), sparse, dense, multimask,
                                 image_index)

    def decode_nested(self, embeddings: Tensor, points: Tensor | None = None, labels: Tensor | None = None,
                      boxes: Tensor | None = None, *, multimask: bool = True) -> tuple[Tensor, Tensor]:
        """Decode a different number of prompts per image in one batch.

        Args:
            embeddings: ``(B, C, h, w)``.
            points, labels: jagged NestedTensors ``(B, j, N, 2)`` and ``(B, j, N)``; boxes: ``(B, j, 4)``; the
                prompt counts ``j`` vary per image and must agree between the given inputs.

        Returns:
            jagged ``(B, j, M, 4h, 4w)`` logits and ``(B, j, M)`` IoU predictions (``.unbind()`` per image).
        """
        ref = points if points is not None else boxes
        if ref is None or not ref.is_nested:
            raise ValueError("decode_nested takes jagged NestedTensor prompts")
        offsets = ref.offsets()
        total = ref.values().shape[0]  # known on the host: no device sync
        index = torch.repeat_interleave(torch.arange(len(offsets) - 1, device=offsets.device), offsets.diff(),
                                        output_size=total).to(embeddings.device)
        logits, iou = self.decode(embeddings, None if points is None else points.values(),
                                  None if labels is None else labels.values(),
                                  None if boxes is None else boxes.values(), multimask=multimask, image_index=index)
        return (torch.nested.nested_tensor_from_jagged(logits, offsets.to(logits.device)),
                torch.nested.nested_tensor_from_jagged(iou, offsets.to(iou.device)))

    def forward(self, images: Tensor, points: Tensor | None = None, labels: Tensor | None = None,
                boxes: Tensor | None = None, multimask: bool = True) -> SamOutput:
        """End to end with ``P`` prompts per image.

        Args:
            images: ``(B, 3, S, S)`` normalised, padded.
            points, labels: ``(B, P, N, 2)`` and ``(B, P, N)``; boxes: ``(B, P, 4)`` (input-frame pixels).
        """
        emb = self.encode(images)
        b = images.shape[0]
        p = (points if points is not None else boxes).shape[1]
        index = torch.arange(b, device=images.device)[:, None].expand(b, p).reshape(-1)  # image of each prompt
        logits, iou = self.decode(emb, None if points is None else points.flatten(0, 1),
                                  None if labels is None else labels.flatten(0, 1),
                                  None if boxes is None else boxes.flatten(0, 1), multimask=multimask,
                                  image_index=index)
        return SamOutput(logits.unflatten(0, (b, p)), iou.unflatten(0, (b, p)))


def build_sam(variant: str = "vit_b", **overrides: Any) -> Sam:
    """Build a randomly initialised SAM; ``overrides`` replace fields of the variant's :class:`SamConfig`."""
    if variant not in CONFIGS:
        raise ValueError(f"unknown SAM variant {variant!r}; known: {sorted(CONFIGS)}")
    return Sam(dataclasses.replace(CONFIGS[variant], **overrides)).eval()


@register_model("sam_vit_b", task="segmentation")
def sam_vit_b(**overrides: Any) -> Sam:
    """SAM ViT-B (90 M image-encoder parameters; blocks 2, 5, 8, 11 attend globally)."""
    return build_sam("vit_b", **overrides)


@register_model("sam_vit_l", task="segmentation")
def sam_vit_l(**overrides: Any) -> Sam:
    """SAM ViT-L (308 M image-encoder parameters)."""
    return build_sam("vit_l", **overrides)


@register_model("sam_vit_h", task="segmentation")
def sam_vit_h(**overrides: Any) -> Sam:
    """SAM ViT-H (637 M image-encoder parameters)."""
    return build_sam("vit_h", **overrides)


@register_model("sam_test", task="segmentation")
def sam_test(**overrides: Any) -> Sam:
    """A tiny SAM for tests and examples (no meaningful weights exist for it)."""
    return build_sam("test", **overrides)
