"""Crop pre-processing shared by the recognition predictor and the training generator.

Both sides must resize identically, or the model meets pixels at inference it never saw in training:
a crop becomes RGB uint8 of height :data:`HEIGHT` with its aspect ratio kept (bilinear), and batches pad it
on the right with its own paper colour up to a bucket width.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
import torch
from PIL import Image

from vision.errors import VisionError

__all__ = [
    "BUCKET",
    "HEIGHT",
    "STRIDE",
    "InvalidCrop",
    "as_rgb_array",
    "batch_crops",
    "bucket_width",
    "pad_color",
    "resize_to_height",
]

HEIGHT = 32
STRIDE = 4  # input pixels per output frame (the backbone divides the width by 4)
BUCKET = 32  # bucket widths are multiples of this: at most BUCKET - 1 padded columns per crop


class InvalidCrop(VisionError):
    """A crop that is not an image (wrong type, dtype, channel count or an empty size)."""


def as_rgb_array(crop: Any, index: int = 0) -> np.ndarray:
    """Convert a numpy ``HxW``/``HxWx{1,3,4}`` uint8 array, a ``[3, H, W]``/``[H, W, 3]`` tensor or a PIL image to
    ``HxWx3`` uint8 RGB. Float arrays/tensors are taken as [0, 1]."""
    if isinstance(crop, Image.Image):
        return np.asarray(crop.convert("RGB"))
    if isinstance(crop, torch.Tensor):
        t = crop.detach().cpu()
        if t.dim() == 3 and t.shape[0] in (1, 3) and t.shape[-1] not in (1, 3):
            t = t.permute(1, 2, 0)
        crop = t.numpy()
    if not isinstance(crop, np.ndarray):
        raise InvalidCrop(f"crop {index}", f"expected a numpy array, tensor or PIL image, got {type(crop).__name__}")
    arr = crop
    if arr.dtype != np.uint8:
        if not np.issubdtype(arr.dtype, np.floating):
            raise InvalidCrop(f"crop {index}", f"unsupported dtype {arr.dtype}")
        arr = (np.clip(arr, 0, 1) * 255 + 0.5).astype(np.uint8)
    if arr.ndim == 2:
        arr = arr[..., None]
    if arr.ndim != 3 or arr.shape[2] not in (1, 3, 4):
        raise InvalidCrop(f"crop {index}", f"expected HxW or HxWxC (C in 1, 3, 4), got shape {arr.shape}")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidCrop(f"crop {index}", f"empty crop of shape {arr.shape}")
    if arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    return np.ascontiguousarray(arr[..., :3])


def resize_to_height(img: np.ndarray, height: int = HEIGHT, min_width: int = 8) -> np.ndarray:
    """Resize ``HxWx3`` uint8 to ``height`` rows keeping the aspect ratio (width >= ``min_width``)."""
    h, w = img.shape[:2]
    new_w = max(min_width, round(w * height / h))
    interp = cv2.INTER_AREA if h > height else cv2.INTER_LINEAR
    return cv2.resize(img, (new_w, height), interpolation=interp)


def bucket_width(width: int, bucket: int = BUCKET) -> int:
    """The batch width a crop of ``width`` pixels is padded to: the next multiple of ``bucket``."""
    return max(bucket, -(-width // bucket) * bucket)


def pad_color(img: np.ndarray) -> np.ndarray:
    """The paper colour used for padding: per-channel median of the crop's outer pixels (``[3]`` uint8)."""
    edge = np.sort(np.concatenate([img[0], img[-1], img[:, 0], img[:, -1]]), axis=0)  # [K, 3]
    k = len(edge)  # np.median's value (mean of the two middle ones when K is even), without its overhead
    return ((edge[(k - 1) // 2].astype(np.float64) + edge[k // 2]) / 2).astype(np.uint8)


def batch_crops(crops: Sequence[np.ndarray], width: int) -> torch.Tensor:
    """Stack ``32xWx3`` uint8 crops (each ``W <= width``) into ``[N, 3, 32, width]`` uint8, right-padded."""
    out = np.empty((len(crops), crops[0].shape[0], width, 3), np.uint8)
    for i, c in enumerate(crops):
        w = c.shape[1]
        out[i, :, :w] = c
        out[i, :, w:] = pad_color(c)
    return torch.from_numpy(out).permute(0, 3, 1, 2)
