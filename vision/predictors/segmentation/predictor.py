"""SAM predictor: ``set_image(s)`` once, ``predict`` many times; owns resizing, normalisation and mask upscaling.

    import vision
    sam = vision.sam_predictor("sam_vit_b_01ec64.pth", fast="triton")   # or FastOptions(...), or None
    sam.set_image(page)                                                  # RGB uint8 H x W x 3 or PageImage
    pred = sam.predict(points=[[120, 80]], labels=[1])
    regions = pred.regions()                                             # Region(kind="mask", ...)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from vision.io.page import PageImage
from vision.predictors._device import pick_device
from vision.predictors.segmentation.checkpoint import load_sam
from vision.fast.sam import LADDER, FastOptions, StaticBatchEncoder, apply_fast
from vision.models.segmentation.sam.sam import Sam
from vision.ops.masks import masks_to_boxes
from vision.structures import Region

__all__ = ["MaskPrediction", "SamPredictor", "as_rgb", "sam_predictor"]


def as_rgb(image: Any) -> np.ndarray:
    """The RGB uint8 ``(H, W, 3)`` array of a numpy image or :class:`PageImage` (``ValueError`` otherwise)."""
    array = image.image if isinstance(image, PageImage) else image
    if not isinstance(array, np.ndarray) or array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8:
        raise ValueError(f"expected an RGB uint8 (H, W, 3) array or PageImage, got {type(array).__name__} "
                         f"{getattr(array, 'shape', '')} {getattr(array, 'dtype', '')}")
    if min(array.shape[:2]) < 1:
        raise ValueError(f"empty image of shape {array.shape}")
    return array


@dataclass
class MaskPrediction:
    """Masks for the ``P`` prompts of one image.

    Attributes:
        masks: boolean ``(P, M, H, W)`` at the image's original size (``M`` = 3 with multimask, else 1).
        scores: ``(P, M)`` predicted IoU of each mask.
        low_res_logits: ``(P, M, 256, 256)`` logits (on the model's device), reusable as ``mask_input``.
    """

    masks: np.ndarray
    scores: np.ndarray
    low_res_logits: Tensor

    def regions(self, *, best_only: bool = True) -> list[Region]:
        """``Region(kind="mask")`` per prompt (its best-scoring mask) or, with ``best_only=False``, per mask."""
        h, w = self.masks.shape[-2:]
        picks = [(p, int(self.scores[p].argmax())) for p in range(len(self.masks))] if best_only else [
            (p, m) for p in range(self.masks.shape[0]) for m in range(self.masks.shape[1])]
        regions = []
        for p, m in picks:
            mask = self.masks[p, m]
            x0, y0, x1, y1 = masks_to_boxes(torch.from_numpy(mask)).tolist()
            geometry = (x0 / w, y0 / h, (x1 + 1) / w, (y1 + 1) / h) if mask.any() else (0.0, 0.0, 0.0, 0.0)
            regions.append(Region(kind="mask", geometry=geometry, score=float(self.scores[p, m]), mask=mask))
        return regions


class SamPredictor:
    """Encodes images once and decodes prompts against them, batched over images and prompts.

    Args:
        model: a :class:`Sam` (its weights loaded); moved to ``device`` and given ``fast``'s options.
        fast: the speed-ladder options (default: fp32 eager with SDPA).
        device: default CUDA when available, else CPU.
        batch_size: images encoded per encoder call.
    """

    def __init__(self, model: Sam, *, fast: FastOptions | None = None, device: str | torch.device | None = None,
                 batch_size: int = 8) -> None:
        self.options = fast or FastOptions()
        self.device = pick_device(device)
        self.model = apply_fast(model.to(self.device).eval(), self.options)
        self.config = model.config
        self._encode = (StaticBatchEncoder(self.model.image_encoder, self.options.batch_buckets)
                        if self.options.compile else self.model.image_encoder)
        self.batch_size = batch_size
        self._mean = torch.tensor(self.config.pixel_mean, device=self.device).view(3, 1, 1)
        self._std = torch.tensor(self.config.pixel_std, device=self.device).view(3, 1, 1)
        self.reset_image()

    def reset_image(self) -> None:
        """Forget the images set so far."""
        self.features: Tensor | None = None
        self.original_sizes: list[tuple[int, int]] = []
        self.input_sizes: list[tuple[int, int]] = []

    def input_size(self, h: int, w: int) -> tuple[int, int]:
        """Size of an ``h x w`` image resized so that its long side is the model's input size."""
        scale = self.config.image_size / max(h, w)
        return int(h * scale + 0.5), int(w * scale + 0.5)

    def _prepare(self, image: np.ndarray) -> Tensor:
        """RGB uint8 ``(H, W, 3)`` -> normalised, zero-padded ``(3, S, S)`` on the device."""
        size = self.config.image_size
        image = image if image.flags.writeable else image.copy()  # torch cannot alias read-only arrays
        x = torch.from_numpy(image).to(self.device).permute(2, 0, 1)[None].float()
        x = F.interpolate(x, self.input_size(*image.shape[:2]), mode="bilinear", antialias=True, align_corners=False)
        x = (x.round().clamp(0, 255)[0] - self._mean) / self._std
        return F.pad(x, (0, size - x.shape[-1], 0, size - x.shape[-2]))

    @torch.inference_mode()
    def set_images(self, images: Sequence[Any]) -> None:
        """Encode ``images`` (RGB uint8 arrays or :class:`PageImage`) in batches of ``batch_size``."""
        arrays = [as_rgb(im) for im in images]
        if not arrays:
            raise ValueError("set_images needs at least one image")
        self.reset_image()
        feats = []
        for start in range(0, len(arrays), self.batch_size):
            chunk = arrays[start:start + self.batch_size]
            batch = torch.stack([self._prepare(a) for a in chunk]).to(self.options.torch_dtype)
            feats.append(self._encode(batch))
        self.features = torch.cat(feats)
        self.original_sizes = [a.shape[:2] for a in arrays]
        self.input_sizes = [self.input_size(*a.shape[:2]) for a in arrays]

    def set_image(self, image: Any) -> None:
        """Encode one image."""
        self.set_images([image])

    def _scale(self, coords: np.ndarray, index: int) -> np.ndarray:
        (h, w), (nh, nw) = self.original_sizes[index], self.input_sizes[index]
        return np.asarray(coords, dtype=np.float64) * np.array([nw / w, nh / h])

    def _prompts(self, index: int, points: Any, labels: Any, boxes: Any) -> tuple[Tensor | None, ...]:
        """Image ``index``'s prompts as device tensors in the input frame: ``(P, N, 2)``, ``(P, N)``, ``(P, 4)``."""
        pts = lab = bxs = None
        if points is not None:
            pts = np.asarray(points, dtype=np.float64)
            pts = pts[None] if pts.ndim == 2 else pts
            if pts.ndim != 3 or pts.shape[-1] != 2:
                raise ValueError(f"points must be (N, 2) or (P, N, 2), got {pts.shape}")
            lab = np.ones(pts.shape[:2]) if labels is None else np.asarray(labels).reshape(pts.shape[:2])
            pts = torch.as_tensor(self._scale(pts, index), dtype=torch.float32, device=self.device)
            lab = torch.as_tensor(lab, dtype=torch.int64, device=self.device)
        if boxes is not None:
            bxs = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
            bxs = torch.as_tensor(self._scale(bxs.reshape(-1, 2, 2), index).reshape(-1, 4), dtype=torch.float32,
                                  device=self.device)
        if pts is None and bxs is None:
            raise ValueError("give points and/or boxes")
        if pts is not None and bxs is not None and pts.shape[0] != bxs.shape[0]:
            raise ValueError(f"{pts.shape[0]} point prompts but {bxs.shape[0]} boxes")
        return pts, lab, bxs

    @torch.inference_mode()
    def predict_torch(self, points: Tensor | None, labels: Tensor | None, boxes: Tensor | None = None,
                      mask_input: Tensor | None = None, *, multimask: bool = True, index: int = 0) -> tuple[Tensor, Tensor]:
        """Decode input-frame prompts of image ``index``: low-res logits ``(P, M, 4h, 4w)`` and scores ``(P, M)``
        (fp32, on the device)."""
        if self.features is None:
            raise ValueError("call set_image(s) before predict")
        logits, iou = self.model.decode(self.features[index:index + 1], points, labels, boxes, mask_input,
                                        multimask=multimask)
        return logits.float(), iou.float()

    def upscale(self, logits: Tensor, index: int = 0) -> Tensor:
        """Low-res logits ``(..., 4h, 4w)`` -> logits at image ``index``'s original size ``(..., H, W)``."""
        lead = logits.shape[:-2]
        x = logits.reshape(-1, 1, *logits.shape[-2:]).float()
        size = self.config.image_size
        x = F.interpolate(x, (size, size), mode="bilinear", align_corners=False)
        nh, nw = self.input_sizes[index]
        x = F.interpolate(x[..., :nh, :nw], self.original_sizes[index], mode="bilinear", align_corners=False)
        return x.reshape(*lead, *x.shape[-2:])

    def _result(self, logits: Tensor, iou: Tensor, index: int) -> MaskPrediction:
        masks = self.upscale(logits, index) > 0
        return MaskPrediction(masks.cpu().numpy(), iou.cpu().numpy(), logits)

    @torch.inference_mode()
    def predict(self, points: Any = None, labels: Any = None, boxes: Any = None, mask_input: Any = None, *,
                multimask: bool = True) -> MaskPrediction | list[MaskPrediction]:
        """Masks for prompts in original-image pixels.

        With one image set: ``points (N, 2)`` or ``(P, N, 2)``, ``labels (N,)``/``(P, N)`` (1 foreground,
        0 background, -1 padding; default all 1), ``boxes (4,)`` or ``(P, 4)`` ``xyxy``, ``mask_input``
        ``(P, 1, 256, 256)`` logits from an earlier prediction; returns one :class:`MaskPrediction`.
        With several images set: each argument is a sequence with one entry per image, and the result a list.
        """
        if self.features is None:
            raise ValueError("call set_image(s) before predict")
        n = len(self.original_sizes)
        if n == 1:
            pts, lab, bxs = self._prompts(0, points, labels, boxes)
            masks = None if mask_input is None else torch.as_tensor(mask_input, device=self.device).float().reshape(
                -1, 1, *self.model.prompt_encoder.mask_input_size)
            return self._result(*self.predict_torch(pts, lab, bxs, masks, multimask=multimask), 0)
        if mask_input is not None:
            raise ValueError("mask_input is supported with one image set")
        per_image = [self._prompts(i, *(None if a is None else a[i] for a in (points, labels, boxes))) for i in range(n)]
        if self.options.nested_prompts and _nestable(per_image):
            return self._predict_nested(per_image, multimask)
        return [self._result(*self.predict_torch(*p, multimask=multimask, index=i), i) for i, p in enumerate(per_image)]

    def _predict_nested(self, per_image: list[tuple[Tensor | None, ...]], multimask: bool) -> list[MaskPrediction]:
        """All images' prompts through the prompt encoder and mask decoder in one jagged batch."""
        def nest(k: int) -> Tensor | None:
            parts = [p[k] for p in per_image]
            return None if parts[0] is None else torch.nested.as_nested_tensor(parts, layout=torch.jagged)

        logits, iou = self.model.decode_nested(self.features, nest(0), nest(1), nest(2), multimask=multimask)
        return [self._result(lg.float(), sc.float(), i) for i, (lg, sc) in enumerate(zip(logits.unbind(), iou.unbind()))]


def _nestable(per_image: list[tuple[Tensor | None, ...]]) -> bool:
    """Jagged batching needs the same prompt kinds and points per prompt on every image."""
    kinds = {tuple(t is None for t in p) for p in per_image}
    widths = {p[0].shape[1] for p in per_image if p[0] is not None}
    return len(kinds) == 1 and len(widths) <= 1


def sam_predictor(checkpoint: str | Path, *, model_type: str = "vit_b", device: str | torch.device | None = None,
                  fast: FastOptions | str | None = None, batch_size: int = 8) -> SamPredictor:
    """Load an official-layout checkpoint (path or URL, ``.pth`` or safetensors) into a :class:`SamPredictor`.

    Args:
        checkpoint: e.g. ``sam_vit_b_01ec64.pth``.
        model_type: ``"vit_b"``, ``"vit_l"``, ``"vit_h"`` (or ``"test"``).
        device: default CUDA when available.
        fast: :class:`FastOptions`, a rung name of :data:`LADDER` (``"bf16"``, ``"triton"``, ...) or ``None``.
    """
    if isinstance(fast, str):
        if fast not in LADDER:
            raise ValueError(f"unknown speed rung {fast!r}; known: {', '.join(LADDER)}")
        fast = LADDER[fast]
    return SamPredictor(load_sam(checkpoint, variant=model_type), fast=fast, device=device, batch_size=batch_size)
