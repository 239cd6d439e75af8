"""Normalise any decoded picture (Pillow image or numpy array) to the page form: RGB uint8 ``(H, W, 3)``."""

from __future__ import annotations

import numpy as np
from PIL import Image

__all__ = ["pil_to_rgb", "array_to_rgb", "composite_on_white"]

_SIXTEEN_BIT = ("I;16", "I;16L", "I;16B", "I;16N", "I")
_WITH_ALPHA = ("RGBA", "RGBa", "LA", "La", "PA")


def composite_on_white(rgba: np.ndarray) -> np.ndarray:
    """Blend ``(H, W, 4)`` uint8 RGBA onto a white background; returns ``(H, W, 3)`` uint8.

    Documents are dark ink on light paper, so transparent areas become paper, not black.
    """
    alpha = rgba[..., 3:4].astype(np.uint16)
    rgb = rgba[..., :3].astype(np.uint16)
    out = (rgb * alpha + 255 * (255 - alpha) + 127) // 255
    return out.astype(np.uint8)


def _gray_to_rgb(gray: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.repeat(gray[..., None], 3, axis=2))


# 16-bit sample -> 8-bit sample with rounding, as one 64 KiB table: no wide temporaries per pixel.
_LUT16 = ((np.arange(65536, dtype=np.uint32) * 255 + 32767) // 65535).astype(np.uint8)
_BLOCK = 1 << 20  # samples converted per step: bounds the temporaries of 32-bit inputs to a few MiB


def _scale_16bit(values: np.ndarray) -> np.ndarray:
    """Map 16-bit samples (0..65535) to 0..255 with rounding; out-of-range 32-bit values are clipped.

    Works in row blocks through a lookup table, so the only full-size allocation is the uint8 output
    (a 13000 x 13000 16-bit page needs 169 MB, never int64 copies of it).
    """
    out = np.empty(values.shape, dtype=np.uint8)
    if values.size == 0:
        return out
    rows = max(1, _BLOCK // max(1, values[0].size))
    for start in range(0, values.shape[0], rows):
        block = values[start : start + rows]
        if block.dtype != np.uint16:
            block = np.clip(block, 0, 65535).astype(np.uint16)
        np.take(_LUT16, block, out=out[start : start + rows])
    return out


def pil_to_rgb(im: Image.Image) -> np.ndarray:
    """Decode ``im`` (already oriented) to ``(H, W, 3)`` uint8 RGB.

    Grayscale and bilevel are replicated, palettes expanded, alpha composited on white, 16-bit samples
    scaled to 8 bits, float samples clipped to 0..255, CMYK/YCbCr/HSV converted by Pillow.
    """
    mode = im.mode
    if mode in _SIXTEEN_BIT:
        return _gray_to_rgb(_scale_16bit(np.asarray(im)))
    if mode == "F":
        return _gray_to_rgb(np.clip(np.rint(np.asarray(im, dtype=np.float32)), 0, 255).astype(np.uint8))
    if mode == "P" and "transparency" in im.info or mode in _WITH_ALPHA:
        return composite_on_white(np.asarray(im.convert("RGBA")))
    if mode == "L":
        return _gray_to_rgb(np.asarray(im))
    if mode != "RGB":
        im = im.convert("RGB")
    return np.ascontiguousarray(np.asarray(im, dtype=np.uint8))


def array_to_rgb(arr: np.ndarray) -> np.ndarray:
    """Normalise a user array to ``(H, W, 3)`` uint8 RGB.

    Accepts ``(H, W)``, ``(H, W, 1)``, ``(H, W, 3)`` (RGB) and ``(H, W, 4)`` (RGBA) arrays of uint8,
    uint16 (scaled from 16 bits), bool, or float in ``[0, 1]`` (scaled by 255). Raises ``ValueError``
    for other shapes or dtypes.
    """
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[..., 0]
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (3, 4)) or 0 in arr.shape:
        raise ValueError(
            f"expected an (H, W), (H, W, 1), (H, W, 3) or (H, W, 4) array, got shape {arr.shape}"
        )
    if arr.dtype == np.uint8:
        out = arr
    elif arr.dtype == np.bool_:
        out = arr.astype(np.uint8) * 255
    elif arr.dtype == np.uint16:
        out = _scale_16bit(arr)
    elif np.issubdtype(arr.dtype, np.floating):
        out = np.clip(np.rint(np.nan_to_num(arr.astype(np.float32)) * 255), 0, 255).astype(np.uint8)
    else:
        raise ValueError(f"expected a uint8, uint16, bool or float array, got dtype {arr.dtype}")
    if out.ndim == 2:
        return _gray_to_rgb(out)
    if out.shape[2] == 4:
        return composite_on_white(out)
    return np.ascontiguousarray(out)
