"""Automatic masks: a grid of point prompts over the image (and optional crops), batched through SAM, filtered
by predicted IoU and stability, de-duplicated with box NMS, returned as ``Region(kind="mask")``.

Masks stay on the model's device until the survivors are copied out once at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from vision.predictors.segmentation.predictor import SamPredictor, as_rgb
from vision.ops.masks import (
    box_nms,
    boxes_near_crop_edge,
    crop_boxes,
    masks_to_boxes,
    point_grid,
    stability_score,
)
from vision.structures import Region

__all__ = ["AutoMaskOptions", "SamAutomaticMaskGenerator"]


@dataclass(frozen=True)
class AutoMaskOptions:
    """Settings of the automatic mask generator (the reference's defaults, chosen for ViT-H).

    Attributes:
        points_per_side: grid of ``n x n`` point prompts on each crop (scaled down per crop layer).
        points_per_batch: prompts decoded per call.
        pred_iou_thresh: keep masks whose predicted IoU exceeds this.
        stability_score_thresh / stability_score_offset: keep masks stable when the logit cut moves by offset.
        box_nms_thresh: box IoU above which a lower-scoring mask of the same crop is dropped.
        crop_n_layers / crop_overlap_ratio / crop_n_points_downscale_factor / crop_nms_thresh: extra crops.
        min_area: drop masks with fewer pixels.
    """

    points_per_side: int = 32
    points_per_batch: int = 64
    pred_iou_thresh: float = 0.88
    stability_score_thresh: float = 0.95
    stability_score_offset: float = 1.0
    box_nms_thresh: float = 0.7
    crop_n_layers: int = 0
    crop_overlap_ratio: float = 512 / 1500
    crop_n_points_downscale_factor: int = 1
    crop_nms_thresh: float = 0.7
    min_area: int = 0


@dataclass
class _Masks:
    """Surviving masks of one crop, in the full-image frame, on the device."""

    masks: Tensor  # bool (K, H, W)
    boxes: Tensor  # (K, 4) inclusive pixel xyxy
    scores: Tensor  # (K,) predicted IoU
    stability: Tensor  # (K,)
    crop_area: float


class SamAutomaticMaskGenerator:
    """``generate(image) -> list[Region]`` over a :class:`SamPredictor`."""

    def __init__(self, predictor: SamPredictor, config: AutoMaskOptions | None = None, **overrides: Any) -> None:
        base = config or AutoMaskOptions()
        self.config = AutoMaskOptions(**{**base.__dict__, **overrides})
        self.predictor = predictor

    @torch.inference_mode()
    def generate(self, image: Any) -> list[Region]:
        """Masks covering ``image`` (RGB uint8 array or PageImage), best predicted IoU first."""
        array = as_rgb(image)
        h, w = array.shape[:2]
        cfg = self.config
        found = [self._crop(array, box, layer) for layer, box in crop_boxes((h, w), cfg.crop_n_layers, cfg.crop_overlap_ratio)]
        masks = torch.cat([f.masks for f in found])
        boxes = torch.cat([f.boxes for f in found])
        scores = torch.cat([f.scores for f in found])
        stability = torch.cat([f.stability for f in found])
        if len(found) > 1 and len(masks):  # between crops prefer masks from smaller (more zoomed-in) crops
            crop_score = torch.cat([torch.full((len(f.masks),), 1.0 / f.crop_area, device=masks.device) for f in found])
            keep = box_nms(boxes, crop_score, cfg.crop_nms_thresh)
            masks, boxes, scores, stability = masks[keep], boxes[keep], scores[keep], stability[keep]
        order = scores.argsort(descending=True)
        masks, boxes, scores = masks[order].cpu().numpy(), boxes[order].tolist(), scores[order].tolist()
        return [Region(kind="mask", geometry=(x0 / w, y0 / h, (x1 + 1) / w, (y1 + 1) / h), score=s, mask=m)
                for m, (x0, y0, x1, y1), s in zip(masks, boxes, scores)]

    def _crop(self, image: Any, crop: tuple[int, int, int, int], layer: int) -> _Masks:
        """Masks found on one crop, shifted into the full-image frame."""
        cfg, pred = self.config, self.predictor
        x0, y0, x1, y1 = crop
        h, w = image.shape[:2]
        pred.set_image(image[y0:y1, x0:x1])
        ch, cw = y1 - y0, x1 - x0
        (nh, nw) = pred.input_sizes[0]
        grid = point_grid(cfg.points_per_side // cfg.crop_n_points_downscale_factor**layer)
        points = (grid * torch.tensor([nw, nh], dtype=torch.float64)).float().to(pred.device)  # input frame
        parts = []
        for batch in points.split(cfg.points_per_batch):
            logits, iou = pred.predict_torch(batch[:, None, :], torch.ones(len(batch), 1, dtype=torch.int64,
                                                                           device=pred.device), multimask=True)
            parts.append(self._filter(pred.upscale(logits), iou, crop, (h, w)))
        masks = torch.cat([p[0] for p in parts])
        boxes, scores, stab = (torch.cat([p[k] for p in parts]) for k in (1, 2, 3))
        keep = box_nms(boxes, scores, cfg.box_nms_thresh)
        masks, boxes, scores, stab = masks[keep], boxes[keep], scores[keep], stab[keep]
        masks = F.pad(masks, (x0, w - x1, y0, h - y1))  # into the image frame
        offset = torch.tensor([x0, y0, x0, y0], device=boxes.device)
        return _Masks(masks, boxes + offset, scores, stab, float(ch * cw))

    def _filter(self, logits: Tensor, iou: Tensor, crop: tuple[int, int, int, int],
                size: tuple[int, int]) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Keep confident, stable masks not cut by the crop edge: ``(K, h, w)`` masks, boxes, scores, stability."""
        cfg = self.config
        logits, iou = logits.flatten(0, 1), iou.flatten(0, 1)
        stab = stability_score(logits, 0.0, cfg.stability_score_offset)
        keep = (iou > cfg.pred_iou_thresh) & (stab >= cfg.stability_score_thresh)
        masks = logits[keep] > 0
        boxes = masks_to_boxes(masks)
        keep2 = ~boxes_near_crop_edge(boxes + torch.tensor(crop[:2] * 2, device=boxes.device), crop,
                                      (0, 0, size[1], size[0]))
        if cfg.min_area > 0:
            keep2 &= masks.flatten(1).sum(1) >= cfg.min_area
        return masks[keep2], boxes[keep2], iou[keep][keep2], stab[keep][keep2]
