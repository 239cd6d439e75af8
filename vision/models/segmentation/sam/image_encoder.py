"""SAM's ViT image encoder (ViTDet-style): windowed and global attention with decomposed relative positions.

Parameter names follow the official checkpoints key for key (``image_encoder.blocks.0.attn.qkv.weight``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from vision.ops.relpos_attention import AttentionImpl, relpos_attention

__all__ = ["EncoderConfig", "ImageEncoderViT", "LayerNorm2d", "window_partition", "window_unpartition"]


@dataclass(frozen=True)
class EncoderConfig:
    """Shape of the ViT encoder (the official sizes are rows of ``vision.models.segmentation.sam.sam.CONFIGS``)."""

    embed_dim: int = 768
    depth: int = 12
    num_heads: int = 12
    global_attn_indexes: tuple[int, ...] = (2, 5, 8, 11)
    img_size: int = 1024
    patch_size: int = 16
    window_size: int = 14
    mlp_ratio: float = 4.0
    out_chans: int = 256


class LayerNorm2d(nn.Module):
    """LayerNorm over the channels of ``(B, C, H, W)``; through ``F.layer_norm`` so bf16 inputs reduce in fp32."""

    def __init__(self, num_channels: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        x = F.layer_norm(x.permute(0, 2, 3, 1), (x.shape[1],), self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class MLPBlock(nn.Module):
    """``lin2(act(lin1(x)))``."""

    def __init__(self, embedding_dim: int, mlp_dim: int, act: type[nn.Module] = nn.GELU) -> None:
        super().__init__()
        self.lin1 = nn.Linear(embedding_dim, mlp_dim)
        self.lin2 = nn.Linear(mlp_dim, embedding_dim)
        self.act = act()

    def forward(self, x: Tensor) -> Tensor:
        return self.lin2(self.act(self.lin1(x)))


class Attention(nn.Module):
    """Multi-head self-attention over a ``(B, H, W, C)`` grid with decomposed relative positions.

    ``impl`` ("math", "sdpa", "triton") is set after the build by :func:`set_attention_impl`.
    """

    def __init__(self, dim: int, num_heads: int, input_size: tuple[int, int]) -> None:
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.rel_pos_h = nn.Parameter(torch.zeros(2 * input_size[0] - 1, head_dim))
        self.rel_pos_w = nn.Parameter(torch.zeros(2 * input_size[1] - 1, head_dim))
        self.impl: AttentionImpl = "sdpa"

    def forward(self, x: Tensor) -> Tensor:
        """Global attention: ``(B, H, W, C)`` -> ``(B, H, W, C)``."""
        return self.proj(self._attend(self.qkv(x)))

    def windowed(self, x: Tensor, window: int) -> Tensor:
        """Attention inside ``window x window`` windows of ``(B, H, W, C)`` zero-padded to a multiple of
        ``window`` (as the reference does after ``norm1``). A zero token's qkv is the projection's bias alone, so
        the projection runs on the real tokens only and the padding is filled with the bias; the output
        projection runs after un-partitioning, on the real tokens only (1024 px inputs: 64 -> 70 tokens a side,
        16% fewer rows through both projections)."""
        h, w = x.shape[1], x.shape[2]
        qkv, pad_hw = window_partition(F.linear(x, self.qkv.weight), window)
        if self.qkv.bias is not None:
            qkv = qkv + self.qkv.bias
        return self.proj(window_unpartition(self._attend(qkv), window, pad_hw, (h, w)))

    def _attend(self, qkv: Tensor) -> Tensor:
        """``(B, H, W, 3C)`` projected tokens -> ``(B, H, W, C)`` attention output (heads merged)."""
        b, h, w, c3 = qkv.shape
        q, k, v = qkv.reshape(b, h * w, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4).unbind(0)  # B, heads, N, C'
        out = relpos_attention(q, k, v, self.rel_pos_h, self.rel_pos_w, (h, w), impl=self.impl)  # B, N, heads, C'
        return out.reshape(b, h, w, c3 // 3)


def window_partition(x: Tensor, window: int) -> tuple[Tensor, tuple[int, int]]:
    """``(B, H, W, C)`` -> ``(B * nW, window, window, C)`` windows (zero padding to a multiple of ``window``),
    plus the padded ``(Hp, Wp)``."""
    b, h, w, c = x.shape
    pad_h, pad_w = (window - h % window) % window, (window - w % window) % window
    if pad_h or pad_w:
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    hp, wp = h + pad_h, w + pad_w
    x = x.view(b, hp // window, window, wp // window, window, c)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, window, window, c), (hp, wp)


def window_unpartition(windows: Tensor, window: int, pad_hw: tuple[int, int], hw: tuple[int, int]) -> Tensor:
    """Inverse of :func:`window_partition`: ``(B * nW, window, window, C)`` -> ``(B, H, W, C)``."""
    hp, wp = pad_hw
    h, w = hw
    b = windows.shape[0] // (hp * wp // window // window)
    x = windows.view(b, hp // window, wp // window, window, window, -1)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(b, hp, wp, -1)
    if hp > h or wp > w:
        x = x[:, :h, :w, :].contiguous()
    return x


class Block(nn.Module):
    """Pre-norm transformer block; ``window_size == 0`` means global attention."""

    def __init__(self, dim: int, num_heads: int, mlp_ratio: float, window_size: int,
                 input_size: tuple[int, int]) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads, input_size if window_size == 0 else (window_size, window_size))
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = MLPBlock(dim, int(dim * mlp_ratio))
        self.window_size = window_size

    def forward(self, x: Tensor) -> Tensor:
        shortcut = x
        x = self.norm1(x)
        x = self.attn.windowed(x, self.window_size) if self.window_size > 0 else self.attn(x)
        x = shortcut + x
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    """Non-overlapping ``patch x patch`` convolution: ``(B, 3, S, S)`` -> ``(B, S/p, S/p, C)``."""

    def __init__(self, patch_size: int, embed_dim: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x: Tensor) -> Tensor:
        return self.proj(x).permute(0, 2, 3, 1)


class ImageEncoderViT(nn.Module):
    """``(B, 3, S, S)`` normalised, padded images -> ``(B, out_chans, S/16, S/16)`` embeddings."""

    def __init__(self, cfg: EncoderConfig) -> None:
        super().__init__()
        self.img_size = cfg.img_size
        grid = cfg.img_size // cfg.patch_size
        self.patch_embed = PatchEmbed(cfg.patch_size, cfg.embed_dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, grid, grid, cfg.embed_dim))
        self.blocks = nn.ModuleList(
            Block(cfg.embed_dim, cfg.num_heads, cfg.mlp_ratio,
                  0 if i in cfg.global_attn_indexes else cfg.window_size, (grid, grid))
            for i in range(cfg.depth)
        )
        self.neck = nn.Sequential(
            nn.Conv2d(cfg.embed_dim, cfg.out_chans, kernel_size=1, bias=False),
            LayerNorm2d(cfg.out_chans),
            nn.Conv2d(cfg.out_chans, cfg.out_chans, kernel_size=3, padding=1, bias=False),
            LayerNorm2d(cfg.out_chans),
        )

    def forward(self, x: Tensor) -> Tensor:
        x = self.patch_embed(x) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.neck(x.permute(0, 3, 1, 2))
