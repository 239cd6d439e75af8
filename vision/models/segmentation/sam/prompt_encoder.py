"""SAM's prompt encoder: points, boxes and low-resolution masks -> sparse and dense prompt embeddings.

Unlike the reference, labels select embeddings with ``torch.where`` rather than boolean indexing, so the
forward never synchronises with the host. Positional encodings are computed in fp32 whatever the weights'
dtype (coordinates lose pixels in bf16) and cast afterwards.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from vision.models.segmentation.sam.image_encoder import LayerNorm2d

__all__ = ["PositionEmbeddingRandom", "PromptEncoder"]


class PositionEmbeddingRandom(nn.Module):
    """Fourier features of coordinates with a fixed random Gaussian frequency matrix (a persisted buffer)."""

    def __init__(self, num_pos_feats: int = 64) -> None:
        super().__init__()
        self.register_buffer("positional_encoding_gaussian_matrix", torch.randn((2, num_pos_feats)))

    def _pe_encoding(self, coords: Tensor) -> Tensor:
        """``(..., 2)`` coordinates in [0, 1] -> ``(..., 2 * num_pos_feats)`` fp32 features."""
        coords = (2 * coords.float() - 1) @ self.positional_encoding_gaussian_matrix.float()
        coords = 2 * math.pi * coords
        return torch.cat([torch.sin(coords), torch.cos(coords)], dim=-1)

    def forward(self, size: tuple[int, int]) -> Tensor:
        """``(C, h, w)`` encoding of the centres of an ``h x w`` grid."""
        h, w = size
        device = self.positional_encoding_gaussian_matrix.device
        y = (torch.arange(h, device=device, dtype=torch.float32) + 0.5) / h
        x = (torch.arange(w, device=device, dtype=torch.float32) + 0.5) / w
        grid = torch.stack([x[None, :].expand(h, w), y[:, None].expand(h, w)], dim=-1)
        return self._pe_encoding(grid).permute(2, 0, 1)

    def forward_with_coords(self, coords: Tensor, image_size: tuple[int, int]) -> Tensor:
        """``(B, N, 2)`` pixel ``(x, y)`` coordinates on an ``image_size = (H, W)`` input -> ``(B, N, C)``."""
        coords = coords.float()
        return self._pe_encoding(torch.stack([coords[..., 0] / image_size[1], coords[..., 1] / image_size[0]], -1))


class PromptEncoder(nn.Module):
    """Embeds prompts for the mask decoder.

    Args:
        embed_dim: prompt embedding width (256 in SAM).
        image_embedding_size: ``(h, w)`` of the image embedding (64 x 64 at 1024 px).
        input_image_size: ``(H, W)`` of the padded model input (1024 x 1024).
        mask_in_chans: hidden channels of the mask-input downscaler.
    """

    def __init__(self, embed_dim: int, image_embedding_size: tuple[int, int], input_image_size: tuple[int, int],
                 mask_in_chans: int) -> None:
        super().__init__()
        self.embed_dim = embed_dim
        self.input_image_size = input_image_size
        self.image_embedding_size = image_embedding_size
        self.pe_layer = PositionEmbeddingRandom(embed_dim // 2)
        # 0: negative point, 1: positive point, 2: box top-left, 3: box bottom-right
        self.point_embeddings = nn.ModuleList(nn.Embedding(1, embed_dim) for _ in range(4))
        self.not_a_point_embed = nn.Embedding(1, embed_dim)
        self.mask_input_size = (4 * image_embedding_size[0], 4 * image_embedding_size[1])
        self.mask_downscaling = nn.Sequential(
            nn.Conv2d(1, mask_in_chans // 4, kernel_size=2, stride=2),
            LayerNorm2d(mask_in_chans // 4),
            nn.GELU(),
            nn.Conv2d(mask_in_chans // 4, mask_in_chans, kernel_size=2, stride=2),
            LayerNorm2d(mask_in_chans),
            nn.GELU(),
            nn.Conv2d(mask_in_chans, embed_dim, kernel_size=1),
        )
        self.no_mask_embed = nn.Embedding(1, embed_dim)

    @property
    def dtype(self) -> torch.dtype:
        return self.no_mask_embed.weight.dtype

    def get_dense_pe(self) -> Tensor:
        """``(1, C, h, w)`` positional encoding of the image embedding grid, in the weights' dtype."""
        return self.pe_layer(self.image_embedding_size).unsqueeze(0).to(self.dtype)

    def _embed_points(self, points: Tensor, labels: Tensor, pad: bool) -> Tensor:
        """``points (B, N, 2)`` pixels and ``labels (B, N)`` (1 fg, 0 bg, -1 padding) -> ``(B, N [+1], C)``."""
        points = points.float() + 0.5  # centre of the pixel
        if pad:  # one "not a point" token, as the official model does when no box is given
            points = torch.cat([points, points.new_zeros(points.shape[0], 1, 2)], dim=1)
            labels = torch.cat([labels, labels.new_full((labels.shape[0], 1), -1)], dim=1)
        emb = self.pe_layer.forward_with_coords(points, self.input_image_size)
        labels = labels[..., None]
        emb = torch.where(labels == -1, self.not_a_point_embed.weight.float(), emb)
        emb = emb + torch.where(labels == 0, self.point_embeddings[0].weight.float(), 0.0)
        emb = emb + torch.where(labels == 1, self.point_embeddings[1].weight.float(), 0.0)
        return emb.to(self.dtype)

    def _embed_boxes(self, boxes: Tensor) -> Tensor:
        """``(B, 4)`` pixel ``xyxy`` boxes -> ``(B, 2, C)`` corner embeddings."""
        coords = (boxes.float() + 0.5).reshape(-1, 2, 2)
        emb = self.pe_layer.forward_with_coords(coords, self.input_image_size)
        corners = torch.cat([self.point_embeddings[2].weight, self.point_embeddings[3].weight]).float()
        return (emb + corners).to(self.dtype)

    def forward(self, points: tuple[Tensor, Tensor] | None, boxes: Tensor | None,
                masks: Tensor | None) -> tuple[Tensor, Tensor]:
        """Embed one batch of ``B`` prompts.

        Args:
            points: ``(coords (B, N, 2), labels (B, N))`` in input-frame pixels, or ``None``.
            boxes: ``(B, 4)`` input-frame ``xyxy`` boxes, or ``None``.
            masks: ``(B, 1, 4h, 4w)`` low-resolution mask logits, or ``None``.

        Returns:
            sparse ``(B, T, C)`` token embeddings and dense ``(B, C, h, w)`` embeddings.
        """
        bs = points[0].shape[0] if points is not None else boxes.shape[0] if boxes is not None else (
            masks.shape[0] if masks is not None else 1)
        device = self.no_mask_embed.weight.device
        parts = [torch.empty((bs, 0, self.embed_dim), device=device, dtype=self.dtype)]
        if points is not None:
            parts.append(self._embed_points(points[0], points[1], pad=boxes is None))
        if boxes is not None:
            parts.append(self._embed_boxes(boxes))
        sparse = torch.cat(parts, dim=1)
        if masks is not None:
            dense = self.mask_downscaling(masks.to(self.dtype))
        else:
            dense = self.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(bs, -1, *self.image_embedding_size)
        return sparse, dense
