"""Shared by the SAM tests: the reference ``segment-anything`` model at a reduced size, with random weights
everywhere (the reference zero-initialises the relative positions and the absolute position embedding, which
would leave those paths untested)."""

from __future__ import annotations

from functools import partial

import torch
from torch import nn

from vision.models.segmentation.sam.image_encoder import EncoderConfig
from vision.models.segmentation.sam.sam import SamConfig

# ViT-B widths (768, 12 heads) at 256 px, one windowed and one global block: 16 x 16 tokens, so the 14-token
# windows pad to 28 x 28.
SMALL_B = SamConfig(EncoderConfig(768, 2, 12, (1,), img_size=256))


def reference_sam(cfg: SamConfig) -> nn.Module:
    """The reference package's ``Sam`` built from its own module classes with ``cfg``'s sizes."""
    from segment_anything.modeling import ImageEncoderViT, MaskDecoder, PromptEncoder, Sam, TwoWayTransformer

    e, grid = cfg.encoder, cfg.embedding_size
    model = Sam(
        image_encoder=ImageEncoderViT(
            img_size=e.img_size, patch_size=e.patch_size, embed_dim=e.embed_dim, depth=e.depth,
            num_heads=e.num_heads, mlp_ratio=e.mlp_ratio, out_chans=cfg.prompt_embed_dim, qkv_bias=True,
            norm_layer=partial(nn.LayerNorm, eps=1e-6), use_rel_pos=True, window_size=e.window_size,
            global_attn_indexes=e.global_attn_indexes),
        prompt_encoder=PromptEncoder(embed_dim=cfg.prompt_embed_dim, image_embedding_size=(grid, grid),
                                     input_image_size=(e.img_size, e.img_size), mask_in_chans=cfg.mask_in_chans),
        mask_decoder=MaskDecoder(
            transformer_dim=cfg.prompt_embed_dim, num_multimask_outputs=cfg.num_multimask_outputs,
            transformer=TwoWayTransformer(depth=cfg.decoder_depth, embedding_dim=cfg.prompt_embed_dim,
                                          mlp_dim=cfg.decoder_mlp_dim, num_heads=cfg.decoder_heads),
            iou_head_depth=cfg.iou_head_depth, iou_head_hidden_dim=cfg.iou_head_hidden_dim),
    )
    randomize_(model)
    return model.eval()


@torch.no_grad()
def randomize_(model: nn.Module, seed: int = 0) -> nn.Module:
    """Give zero-initialised tables random values and jitter the norms, so every parameter matters."""
    gen = torch.Generator().manual_seed(seed)
    for name, p in model.named_parameters():
        if "rel_pos" in name or "pos_embed" in name:
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
        elif "norm" in name or ".neck.1." in name or ".neck.3." in name:
            p.add_(torch.randn(p.shape, generator=gen) * 0.1)
    return model


def random_prompts(n_images: int, n_prompts: int, n_points: int, size: int, seed: int = 0):
    """``points (B, P, N, 2)``, ``labels (B, P, N)`` in {0, 1} and ``boxes (B, P, 4)`` on a ``size`` input."""
    gen = torch.Generator().manual_seed(seed)
    points = torch.rand(n_images, n_prompts, n_points, 2, generator=gen) * size
    labels = torch.randint(0, 2, (n_images, n_prompts, n_points), generator=gen)
    xy0 = torch.rand(n_images, n_prompts, 2, generator=gen) * size / 2
    boxes = torch.cat([xy0, xy0 + size / 4 + torch.rand(n_images, n_prompts, 2, generator=gen) * size / 4], -1)
    return points, labels, boxes


# Small enough for CPU rung tests (128 wide, 4 heads, 8 x 8 tokens padded to one 14 x 14 window): measured rung
# errors are in tests/models/test_sam_fast.py.
RUNG_CPU = SamConfig(EncoderConfig(128, 2, 4, (1,), img_size=128), prompt_embed_dim=64, decoder_heads=4,
                     decoder_mlp_dim=128, iou_head_hidden_dim=64)
# ViT-B widths at 512 px (32 x 32 tokens; windows pad to 42 x 42) for the GPU rung tests.
RUNG_GPU = SamConfig(EncoderConfig(768, 4, 12, (1, 3), img_size=512))


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """``||out - ref|| / ||ref||`` in fp32."""
    return float((out.float() - ref.float()).norm() / ref.float().norm())
