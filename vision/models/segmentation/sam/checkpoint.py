"""SAM state dicts in the official layout (``sam_vit_b_01ec64.pth`` and siblings): pure functions, no I/O.

:func:`convert_official` is the ``state_dict -> state_dict`` filter; :func:`sam_from_state_dict` builds the
model on the meta device and loads strictly, so that a 2.5 GB ViT-H never allocates twice. Reading files and
URLs is :mod:`vision.predictors.segmentation.checkpoint`'s job.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

from vision.errors import WeightsError
from vision.models.segmentation.sam.sam import CONFIGS, Sam, build_sam

__all__ = ["convert_official", "infer_variant", "sam_from_state_dict"]

_PREFIXES = ("module.", "model.", "sam.")
_UNUSED = ("pixel_mean", "pixel_std")  # buffers of some re-saved reference models; the predictor normalises


def convert_official(state: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Map an official SAM state dict onto :class:`Sam` (the names match; wrappers' prefixes and the
    reference's pixel normalisation buffers are dropped). Raises :class:`WeightsError` on a non-SAM dict."""
    out: dict[str, Tensor] = {}
    for key, value in state.items():
        for prefix in _PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix):]
                break
        if key in _UNUSED:
            continue
        out[key] = value
    if not any(k.startswith("image_encoder.") for k in out) or not any(k.startswith("mask_decoder.") for k in out):
        raise WeightsError(None, "not a SAM checkpoint: no image_encoder.* / mask_decoder.* parameters")
    return out


def infer_variant(state: Mapping[str, Tensor]) -> str:
    """The :data:`CONFIGS` row whose encoder width and depth match ``state`` (e.g. ``"vit_h"``)."""
    width = state["image_encoder.pos_embed"].shape[-1]
    depth = 1 + max(int(k.split(".")[2]) for k in state if k.startswith("image_encoder.blocks."))
    for name, cfg in CONFIGS.items():
        if (cfg.encoder.embed_dim, cfg.encoder.depth) == (width, depth):
            return name
    raise WeightsError(None, f"no SAM variant has a {depth}-block, {width}-wide encoder")


def sam_from_state_dict(state: Mapping[str, Tensor], *, variant: str | None = None,
                        source: str | None = None) -> Sam:
    """Build SAM and load an official-layout state dict strictly.

    Args:
        state: the tensors (official layout, or already converted).
        variant: ``"vit_b"``, ``"vit_l"``, ``"vit_h"`` (or ``"test"``); inferred from the tensors when ``None``.
        source: where the tensors came from, for error messages.

    Raises:
        WeightsError: wrong variant, or missing / unexpected / mis-shaped keys.
    """
    state = convert_official(state)
    variant = variant or infer_variant(state)
    with torch.device("meta"):
        model = build_sam(variant)
    expected = {k: v.shape for k, v in model.state_dict().items()}
    bad = sorted(k for k in expected.keys() & state.keys() if state[k].shape != expected[k])
    if bad or expected.keys() != state.keys():
        missing, unexpected = sorted(expected.keys() - state.keys()), sorted(state.keys() - expected.keys())
        raise WeightsError(source,
                           f"checkpoint does not fit sam_{variant}: missing {missing[:5]}, unexpected {unexpected[:5]}, "
                           f"wrong shapes {bad[:5]} ({len(missing)}/{len(unexpected)}/{len(bad)} in all)")
    model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True, assign=True)
    return model.eval()
