"""SAM's mask decoder: a two-way transformer between prompt tokens and the image embedding, then upscaling
and hypernetwork heads. Attention runs through ``F.scaled_dot_product_attention``.

Prompts from several images go through in one batch: ``image_index (P,)`` maps each prompt to its image, so
the image embedding is gathered per prompt on the device (no host round trip).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from vision.models.segmentation.sam.image_encoder import LayerNorm2d, MLPBlock

__all__ = ["MaskDecoder", "TwoWayTransformer"]


class Attention(nn.Module):
    """Multi-head attention whose projections may shrink the width by ``downsample_rate``."""

    def __init__(self, embedding_dim: int, num_heads: int, downsample_rate: int = 1) -> None:
        super().__init__()
        internal = embedding_dim // downsample_rate
        if internal % num_heads:
            raise ValueError(f"num_heads {num_heads} must divide the internal width {internal}")
        self.num_heads = num_heads
        self.q_proj = nn.Linear(embedding_dim, internal)
        self.k_proj = nn.Linear(embedding_dim, internal)
        self.v_proj = nn.Linear(embedding_dim, internal)
        self.out_proj = nn.Linear(internal, embedding_dim)

    def _heads(self, x: Tensor) -> Tensor:
        b, n, c = x.shape
        return x.reshape(b, n, self.num_heads, c // self.num_heads).transpose(1, 2)  # B, heads, N, C'

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        out = F.scaled_dot_product_attention(self._heads(self.q_proj(q)), self._heads(self.k_proj(k)),
                                             self._heads(self.v_proj(v)))
        b, _, n, _ = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(b, n, -1))


class TwoWayAttentionBlock(nn.Module):
    """Token self-attention, token->image attention, token MLP, image->token attention."""

    def __init__(self, dim: int, num_heads: int, mlp_dim: int, skip_first_layer_pe: bool) -> None:
        super().__init__()
        self.self_attn = Attention(dim, num_heads)
        self.norm1 = nn.LayerNorm(dim)
        self.cross_attn_token_to_image = Attention(dim, num_heads, downsample_rate=2)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = MLPBlock(dim, mlp_dim, nn.ReLU)
        self.norm3 = nn.LayerNorm(dim)
        self.norm4 = nn.LayerNorm(dim)
        self.cross_attn_image_to_token = Attention(dim, num_heads, downsample_rate=2)
        self.skip_first_layer_pe = skip_first_layer_pe

    def forward(self, queries: Tensor, keys: Tensor, query_pe: Tensor, key_pe: Tensor) -> tuple[Tensor, Tensor]:
        if self.skip_first_layer_pe:
            queries = self.self_attn(queries, queries, queries)
        else:
            q = queries + query_pe
            queries = queries + self.self_attn(q, q, queries)
        queries = self.norm1(queries)
        k = keys + key_pe
        queries = self.norm2(queries + self.cross_attn_token_to_image(queries + query_pe, k, keys))
        queries = self.norm3(queries + self.mlp(queries))
        keys = self.norm4(keys + self.cross_attn_image_to_token(k, queries + query_pe, queries))
        return queries, keys


class TwoWayTransformer(nn.Module):
    """``depth`` two-way blocks and a final token->image attention."""

    def __init__(self, depth: int, embedding_dim: int, num_heads: int, mlp_dim: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            TwoWayAttentionBlock(embedding_dim, num_heads, mlp_dim, skip_first_layer_pe=i == 0) for i in range(depth)
        )
        self.final_attn_token_to_image = Attention(embedding_dim, num_heads, downsample_rate=2)
        self.norm_final_attn = nn.LayerNorm(embedding_dim)

    def forward(self, image_embedding: Tensor, image_pe: Tensor, point_embedding: Tensor) -> tuple[Tensor, Tensor]:
        """``image_embedding, image_pe (B, C, h, w)``, ``point_embedding (B, T, C)`` -> tokens ``(B, T, C)`` and
        image tokens ``(B, h*w, C)``."""
        keys = image_embedding.flatten(2).transpose(1, 2)
        key_pe = image_pe.flatten(2).transpose(1, 2)
        queries = point_embedding
        for layer in self.layers:
            queries, keys = layer(queries, keys, point_embedding, key_pe)
        attn = self.final_attn_token_to_image(queries + point_embedding, keys + key_pe, keys)
        return self.norm_final_attn(queries + attn), keys


class MLP(nn.Module):
    """``num_layers`` linears with ReLU between them."""

    def __init__(self, input_dim: int, hidden_dim: int, output_dim: int, num_layers: int) -> None:
        super().__init__()
        dims = [input_dim] + [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip(dims, dims[1:] + [output_dim]))

    def forward(self, x: Tensor) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x) if i == len(self.layers) - 1 else F.relu(layer(x))
        return x


class MaskDecoder(nn.Module):
    """Predicts ``1 + num_multimask_outputs`` masks and their IoU scores per prompt."""

    def __init__(self, transformer_dim: int, transformer: TwoWayTransformer, num_multimask_outputs: int = 3,
                 iou_head_depth: int = 3, iou_head_hidden_dim: int = 256) -> None:
        super().__init__()
        self.transformer = transformer
        self.num_mask_tokens = num_multimask_outputs + 1
        self.iou_token = nn.Embedding(1, transformer_dim)
        self.mask_tokens = nn.Embedding(self.num_mask_tokens, transformer_dim)
        self.output_upscaling = nn.Sequential(
            nn.ConvTranspose2d(transformer_dim, transformer_dim // 4, kernel_size=2, stride=2),
            LayerNorm2d(transformer_dim // 4),
            nn.GELU(),
            nn.ConvTranspose2d(transformer_dim // 4, transformer_dim // 8, kernel_size=2, stride=2),
            nn.GELU(),
        )
        self.output_hypernetworks_mlps = nn.ModuleList(
            MLP(transformer_dim, transformer_dim, transformer_dim // 8, 3) for _ in range(self.num_mask_tokens)
        )
        self.iou_prediction_head = MLP(transformer_dim, iou_head_hidden_dim, self.num_mask_tokens, iou_head_depth)

    def forward(self, image_embeddings: Tensor, image_pe: Tensor, sparse_prompt_embeddings: Tensor,
                dense_prompt_embeddings: Tensor, multimask_output: bool,
                image_index: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Masks for ``P`` prompts.

        Args:
            image_embeddings: ``(B, C, h, w)``; image_pe: ``(1, C, h, w)``.
            sparse_prompt_embeddings: ``(P, T, C)``; dense_prompt_embeddings: ``(P or 1, C, h, w)``.
            multimask_output: return the 3 ambiguity masks instead of the single one.
            image_index: ``(P,)`` image of each prompt; ``None`` when ``B == 1``.

        Returns:
            low-resolution mask logits ``(P, M, 4h, 4w)`` and IoU predictions ``(P, M)``, ``M`` = 3 or 1.
        """
        masks, iou_pred = self.predict_masks(image_embeddings, image_pe, sparse_prompt_embeddings,
                                             dense_prompt_embeddings, image_index)
        sel = slice(1, None) if multimask_output else slice(0, 1)
        return masks[:, sel], iou_pred[:, sel]

    def predict_masks(self, image_embeddings: Tensor, image_pe: Tensor, sparse: Tensor, dense: Tensor,
                      image_index: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """All ``num_mask_tokens`` masks ``(P, M, 4h, 4w)`` and scores ``(P, M)`` (see :meth:`forward`)."""
        n_prompts = sparse.shape[0]
        output_tokens = torch.cat([self.iou_token.weight, self.mask_tokens.weight], dim=0)
        tokens = torch.cat([output_tokens.unsqueeze(0).expand(n_prompts, -1, -1), sparse.to(output_tokens.dtype)], 1)
        if image_index is None:
            if image_embeddings.shape[0] != 1:
                raise ValueError("image_index is required when decoding prompts of several images")
            src = image_embeddings.expand(n_prompts, -1, -1, -1)
        else:
            src = image_embeddings.index_select(0, image_index)
        src = src + dense
        b, c, h, w = src.shape
        hs, src = self.transformer(src, image_pe.expand(b, -1, -1, -1), tokens)
        iou_token_out = hs[:, 0, :]
        mask_tokens_out = hs[:, 1:1 + self.num_mask_tokens, :]
        upscaled = self.output_upscaling(src.transpose(1, 2).reshape(b, c, h, w))
        hyper_in = torch.stack([mlp(mask_tokens_out[:, i, :]) for i, mlp in enumerate(self.output_hypernetworks_mlps)], 1)
        b, c, h, w = upscaled.shape
        masks = (hyper_in @ upscaled.reshape(b, c, h * w)).reshape(b, -1, h, w)
        return masks, self.iou_prediction_head(iou_token_out)
