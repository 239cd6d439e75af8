"""Crop and recognise on the recognizer's device: the ``crop`` + ``recognize`` stages for GPU pipelines.

The host path cuts numpy crops and lets the recognition predictor resize, pad and decode them one by one.
Here each page is uploaded once (uint8), every crop of the page is cut *and* resized to the recognizer's
height in one kernel per width bucket (:func:`~vision.ops.crops.roi_crops` for boxes,
:func:`~vision.ops.crops.warp_crops` for quads), padded with its own paper colour (per-crop median of
its border, as :func:`vision.models.recognition.preprocess.pad_color` does on the host), and the logits of
a whole batch are decoded at once. The only host-device syncs are one per recognition batch (the decoded
ids); output widths come from host-side box coordinates.

Crops the host path treats specially go through the predictor unchanged: crops wider than its
``max_width`` once resized (split into overlapping chunks there) and tall crops (read turned by 90 degrees
there).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from torch import Tensor

from vision.models.recognition.preprocess import HEIGHT, STRIDE, bucket_width
from vision.models.recognition.vocab import decode
from vision.ops.crops import box_crops, polygon_crops, polygon_sizes, roi_crops, warp_crops
from vision.ops.ctc import ctc_best_path
from vision.pipelines.base import PageState

__all__ = ["DeviceRecognizeStage", "device_batches"]


def _pixel_boxes(boxes: np.ndarray, h: int, w: int) -> np.ndarray:
    """Integer pixel boxes, rounded outwards exactly as :func:`~vision.ops.crops.box_crops` cuts them."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    x0 = np.clip(np.floor(b[:, 0] * w), 0, w - 1)
    y0 = np.clip(np.floor(b[:, 1] * h), 0, h - 1)
    x1 = np.maximum(np.clip(np.ceil(b[:, 2] * w), 0, w), x0 + 1)
    y1 = np.maximum(np.clip(np.ceil(b[:, 3] * h), 0, h), y0 + 1)
    return np.stack([x0, y0, x1, y1], axis=1)


def _paper_fill(crops: Tensor, widths: Tensor) -> Tensor:
    """NaN padding of ``crops [N, C, H, W]`` -> each crop's median border colour; rounded to uint8 levels."""
    n = crops.shape[0]
    right = crops[torch.arange(n, device=crops.device), :, :, (widths - 1).clamp(min=0)]  # [N, C, H]
    border = torch.cat([crops[:, :, 0, :], crops[:, :, -1, :], crops[:, :, :, 0], right], dim=-1)
    colour = border.nanmedian(dim=-1).values  # [N, C]
    return torch.where(crops.isnan(), colour[:, :, None, None], crops).round_().clamp_(0, 255)


def device_batches(
    states: list[PageState], todo: dict[int, np.ndarray], *, straight: bool, device: torch.device
) -> dict[int, tuple[Tensor, list[tuple[int, int]], np.ndarray]]:
    """Cut the crops of ``todo`` (state index -> word indices) on ``device``, grouped by bucket width.

    Returns:
        ``{bucket width: (uint8-valued float crops [N, 3, HEIGHT, width], [(state, word)], widths [N])}``.
    """
    groups: dict[int, list[tuple[Tensor, list[tuple[int, int]], np.ndarray]]] = {}
    for si, words in todo.items():
        if len(words) == 0:
            continue
        s = states[si]
        h, w = s.image.shape[:2]
        with warnings.catch_warnings():  # pages decoded by Pillow are read-only arrays; we only read them
            warnings.simplefilter("ignore", UserWarning)
            page = torch.from_numpy(s.image).to(device, non_blocking=True).permute(2, 0, 1).float()
        if straight:
            px = _pixel_boxes(s.boxes[words], h, w)
            sizes = np.stack([px[:, 3] - px[:, 1], px[:, 2] - px[:, 0]], axis=1)
        else:
            px = s.polygons[words].astype(np.float64) * [w, h]
            sizes = np.maximum(np.round(polygon_sizes(px)), 1)
        widths = np.maximum(8, np.round(sizes[:, 1] * HEIGHT / sizes[:, 0])).astype(np.int64)
        buckets = np.array([bucket_width(int(x)) for x in widths])
        for bucket in np.unique(buckets):
            sel = buckets == bucket
            geometry = torch.from_numpy(px[sel]).to(device, non_blocking=True)
            wt = torch.from_numpy(widths[sel]).to(device, non_blocking=True)
            cut = roi_crops if straight else warp_crops
            crops = cut(page, geometry, wt, height=HEIGHT, out_width=int(bucket), fill=float("nan"))
            keys = [(si, int(k)) for k in np.asarray(words)[sel]]
            groups.setdefault(int(bucket), []).append((_paper_fill(crops, wt), keys, widths[sel]))
    return {
        b: (
            torch.cat([g[0] for g in parts]),
            [k for g in parts for k in g[1]],
            np.concatenate([g[2] for g in parts]),
        )
        for b, parts in groups.items()
    }


class DeviceRecognizeStage:
    """``crop`` + ``recognize`` on the device of a recognition predictor.

    Args:
        predictor: the recognition predictor (its ``model``, ``device``, ``dtype``, ``batch_size``,
            ``max_width``, ``pad_batches`` and ``rotate_tall`` are used; special crops go through it).
        straight: boxes (``True``) or quads.
    """

    def __init__(self, predictor: Any, *, straight: bool = True) -> None:
        self.predictor, self.straight = predictor, straight

    def _special(self, s: PageState) -> np.ndarray:
        """``bool[N]``: crops the predictor must read itself (too wide once resized, or tall)."""
        h, w = s.image.shape[:2]
        if self.straight:
            px = _pixel_boxes(s.boxes, h, w)
            ch, cw = px[:, 3] - px[:, 1], px[:, 2] - px[:, 0]
        else:
            ch, cw = polygon_sizes(s.polygons.astype(np.float64) * [w, h]).T
        wide = np.maximum(8, np.round(cw * HEIGHT / np.maximum(ch, 1))) > self.predictor.max_width
        tall = (ch > 1.5 * cw) & (ch >= 24) if self.predictor.rotate_tall else np.zeros_like(wide)
        return wide | tall

    @torch.inference_mode()
    def __call__(self, states: list[PageState]) -> list[PageState]:
        p = self.predictor
        todo, special = {}, {}
        for i, s in enumerate(states):
            if s.needs_ocr:
                s.texts = [("", 0.0)] * len(s.boxes)
                flags = self._special(s)
                todo[i], special[i] = np.nonzero(~flags)[0], np.nonzero(flags)[0]
        for crops, keys, widths in device_batches(
            states, todo, straight=self.straight, device=p.device
        ).values():
            for start in range(0, len(keys), p.batch_size):
                x = crops[start : start + p.batch_size]
                n = x.shape[0]
                if p.pad_batches and n < p.batch_size:  # one static shape per bucket for compiled models
                    x = torch.cat([x, x[-1:].expand(p.batch_size - n, -1, -1, -1)])
                dtype = p.dtype if p.dtype.is_floating_point else torch.float32
                logits = torch.as_tensor(p.model(x.to(dtype) / 255))[:n]
                lengths = torch.from_numpy(-(-widths[start : start + n] // STRIDE)).to(logits.device)
                lexicon = getattr(p, "lexicon", None)
                paths = ctc_best_path(logits, lengths=lengths)
                for j, ((si, k), path) in enumerate(zip(keys[start : start + n], paths)):
                    text = decode(path.ids)
                    if lexicon is not None and lexicon.needs_check(text):  # as RecognitionPredictor does
                        text = lexicon.correct(text, logits[j, : int(lengths[j])].float().log_softmax(-1))
                    states[si].texts[k] = (text, float(path.confidence))
        self._read_special(states, special)
        return states

    def _read_special(self, states: list[PageState], special: dict[int, np.ndarray]) -> None:
        crops, keys = [], []
        for si, words in special.items():
            s = states[si]
            if len(words):
                cut = (
                    box_crops(s.image, s.boxes[words])
                    if self.straight
                    else polygon_crops(s.image, s.polygons[words])
                )
                crops += cut
                keys += [(si, int(k)) for k in words]
        for (si, k), result in zip(keys, self.predictor(crops) if crops else []):
            states[si].texts[k] = result
