"""Cut word images out of pages: axis-aligned boxes and rotated 4-point polygons.

Two families:

* numpy (CPU): :func:`box_crops` returns views into the page (no copy) and :func:`polygon_crops`
  perspective-warps rotated quads upright with OpenCV. The recognizer resizes them itself.
* torch (any device, batched): :func:`roi_crops` (torchvision's ``roi_align`` kernel) and :func:`warp_crops`
  (homography + ``grid_sample``) cut *and* resize every crop of a page to one height in one kernel call,
  returning a padded batch ``[N, C, height, W]`` plus each crop's useful width. They never read a value back
  to the host: output widths are computed by the caller from CPU-side box coordinates (:func:`crop_widths`).

Geometry follows :mod:`vision.structures.geometry`: relative ``(x0, y0, x1, y1)`` boxes and polygons
clockwise from the top-left corner of the text.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
from collections.abc import Callable

import cv2
import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from vision.ops.boxes import pixel_boxes

__all__ = ["box_crops", "polygon_crops", "polygon_sizes", "crop_widths", "roi_align_kernel", "roi_crops",
           "warp_crops"]


def box_crops(image: np.ndarray, boxes: np.ndarray) -> list[np.ndarray]:
    """Axis-aligned crops of a page.

    Args:
        image: ``(H, W, C)`` array.
        boxes: ``[N, 4]`` relative ``x0, y0, x1, y1``.

    Returns:
        ``N`` views into ``image`` (no copy), each at least 1 x 1 pixel, rounded outwards to whole pixels.
    """
    px = pixel_boxes(boxes, *image.shape[:2]).astype(int)
    return [image[b:d, a:c] for a, b, c, d in px.tolist()]


def polygon_sizes(polygons: np.ndarray) -> np.ndarray:
    """Upright ``(height, width)`` of quads ``[N, 4, 2]`` (any unit): mean of opposite edge lengths.

    Returns:
        ``[N, 2]`` float array.
    """
    p = np.asarray(polygons, dtype=np.float64).reshape(-1, 4, 2)
    top = np.linalg.norm(p[:, 1] - p[:, 0], axis=1)
    bottom = np.linalg.norm(p[:, 2] - p[:, 3], axis=1)
    left = np.linalg.norm(p[:, 3] - p[:, 0], axis=1)
    right = np.linalg.norm(p[:, 2] - p[:, 1], axis=1)
    return np.stack([(left + right) / 2, (top + bottom) / 2], axis=1)


def polygon_crops(image: np.ndarray, polygons: np.ndarray) -> list[np.ndarray]:
    """Upright crops of rotated quads by perspective warp (the top edge of the quad becomes the top row).

    Args:
        image: ``(H, W, C)`` uint8 array.
        polygons: ``[N, 4, 2]`` relative points, clockwise from the text's top-left corner.

    Returns:
        ``N`` new arrays of shape ``(h_i, w_i, C)`` with ``h_i, w_i`` the quad's edge lengths in pixels.
    """
    h, w = image.shape[:2]
    pts = np.asarray(polygons, dtype=np.float64).reshape(-1, 4, 2) * [w, h]
    sizes = np.maximum(np.round(polygon_sizes(pts)), 1).astype(int)
    crops = []
    for quad, (ch, cw) in zip(pts, sizes):
        # relative geometry puts pixel i on [i, i + 1); OpenCV puts pixel i at i: shift both sides by half
        dst = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], dtype=np.float32) - 0.5
        matrix = cv2.getPerspectiveTransform((quad - 0.5).astype(np.float32), dst)
        crops.append(
            cv2.warpPerspective(
                image, matrix, (int(cw), int(ch)), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            )
        )
    return crops


def crop_widths(sizes: np.ndarray, height: int, *, max_width: int, multiple: int = 1) -> np.ndarray:
    """Widths that keep each crop's aspect ratio once resized to ``height``.

    Args:
        sizes: ``[N, 2]`` crop ``(height, width)`` in pixels.
        height: target height in pixels.
        max_width: widths are clamped to this (wider words are squeezed).
        multiple: widths are rounded up to a multiple of this (e.g. the recognizer's horizontal stride).

    Returns:
        ``[N]`` int64 array, each in ``[multiple, max_width]``.
    """
    sizes = np.asarray(sizes, dtype=np.float64).reshape(-1, 2)
    widths = np.round(sizes[:, 1] * height / np.maximum(sizes[:, 0], 1.0))
    widths = np.ceil(np.maximum(widths, 1) / multiple) * multiple
    return np.clip(widths, multiple, max_width).astype(np.int64)


def _mask_columns(crops: Tensor, widths: Tensor, fill: float) -> Tensor:
    """Set columns ``>= widths[i]`` of ``crops[i]`` (``[N, C, h, W]``) to ``fill``."""
    cols = torch.arange(crops.shape[-1], device=crops.device)
    keep = cols[None, :] < widths[:, None]  # [N, W]
    return crops.masked_fill(~keep[:, None, None, :], fill)


@functools.cache
def roi_align_kernel() -> Callable[..., Tensor]:
    """torchvision's compiled ``roi_align`` operator, ``(input, rois, spatial_scale, out_h, out_w,
    sampling_ratio, aligned) -> Tensor``: what ``torchvision.ops.roi_align`` calls for a tensor of rois.

    Loaded from torchvision's extension library without importing ``torchvision.ops``, which imports
    ``torch._dynamo`` and Triton (seconds of every GPU process's start-up; ``docs/benchmarks.md``). Falls
    back to ``torchvision.ops.roi_align`` when the library is not found where the package lies."""
    try:
        return torch.ops.torchvision.roi_align  # already registered (torchvision imported, or loaded here)
    except (AttributeError, RuntimeError):
        pass
    spec = importlib.util.find_spec("torchvision")
    loaders = (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES)
    for folder in list(spec.submodule_search_locations or []) if spec is not None else []:
        finder = importlib.machinery.FileFinder(folder, loaders)
        for name in ("_C_stable", "_C"):  # the library's name in recent and in older torchvision releases
            found = finder.find_spec(name)
            if found is None or not found.origin:
                continue
            try:
                torch.ops.load_library(found.origin)
                return torch.ops.torchvision.roi_align
            except (OSError, AttributeError, RuntimeError):
                break
    from torchvision.ops import roi_align

    return lambda x, rois, scale, h, w, ratio, aligned: roi_align(x, rois, (h, w), scale, ratio, aligned)


def roi_crops(
    image: Tensor,
    boxes: Tensor,
    widths: Tensor,
    *,
    height: int,
    out_width: int,
    fill: float = 0.0,
    batch_index: Tensor | None = None,
) -> Tensor:
    """Cut and resize straight boxes of one page, or of a batch of same-size pages, in one ``roi_align`` call.

    Each box is sampled into ``height x widths[i]`` pixels (antialiased), so aspect ratios are kept; the
    batch is padded to ``out_width`` with ``fill``. The box is extended to the right in the sampling grid so
    that one output size serves every crop, and the extension is masked, never read as content. Each output
    pixel is computed from its own page alone, so cutting many pages in one call gives the same crops as
    one call per page.

    Args:
        image: ``[C, H, W]`` float page, or ``[B, C, H, W]`` pages.
        boxes: ``[N, 4]`` pixel ``x0, y0, x1, y1`` (same device as ``image``).
        widths: ``[N]`` int64 output widths (from :func:`crop_widths`), each ``<= out_width``.
        height: output height.
        out_width: padded output width (a Python int, so nothing is read back from the device).
        fill: value of the padding columns.
        batch_index: ``[N]`` page of each box in a ``[B, C, H, W]`` batch (required then; ignored for one page).

    Returns:
        ``[N, C, height, out_width]`` tensor of ``image``'s dtype.
    """
    pages = image[None] if image.dim() == 3 else image
    if boxes.numel() == 0:
        return image.new_zeros((0, pages.shape[1], height, out_width))
    boxes = boxes.to(image.dtype)
    if image.dim() == 3:
        index = torch.zeros_like(boxes[:, 0])
    elif batch_index is None:
        raise ValueError("roi_crops needs batch_index for a [B, C, H, W] batch of pages")
    else:
        index = batch_index.to(boxes)
    scale = out_width / widths.to(boxes.dtype)  # >= 1: the grid covers out_width at the crop's own scale
    x1 = boxes[:, 0] + (boxes[:, 2] - boxes[:, 0]) * scale
    rois = torch.stack([index, boxes[:, 0], boxes[:, 1], x1, boxes[:, 3]], dim=1)  # [N, 5]
    # sampling_ratio=-1: ceil(bin size) samples per bin and axis, i.e. area averaging when shrinking
    crops = roi_align_kernel()(pages, rois, 1.0, height, out_width, -1, True)
    return _mask_columns(crops, widths, fill)


def _homographies(src: Tensor, dst: Tensor) -> Tensor:
    """Batched homographies ``[N, 3, 3]`` mapping ``dst`` quads onto ``src`` quads (both ``[N, 4, 2]``)."""
    n = src.shape[0]
    x, y = dst[..., 0], dst[..., 1]
    u, v = src[..., 0], src[..., 1]
    one, zero = torch.ones_like(x), torch.zeros_like(x)
    rows_u = torch.stack([x, y, one, zero, zero, zero, -x * u, -y * u], dim=-1)  # [N, 4, 8]
    rows_v = torch.stack([zero, zero, zero, x, y, one, -x * v, -y * v], dim=-1)
    a = torch.cat([rows_u, rows_v], dim=1)  # [N, 8, 8]
    b = torch.cat([u, v], dim=1)  # [N, 8]
    h = torch.linalg.solve(a, b)  # [N, 8]
    return torch.cat([h, torch.ones(n, 1, dtype=h.dtype, device=h.device)], dim=1).view(n, 3, 3)


def warp_crops(
    image: Tensor, polygons: Tensor, widths: Tensor, *, height: int, out_width: int, fill: float = 0.0
) -> Tensor:
    """Cut rotated quads of one page upright and resized to ``height`` with one ``grid_sample`` call.

    Args:
        image: ``[C, H, W]`` float page.
        polygons: ``[N, 4, 2]`` pixel points clockwise from the text's top-left (same device as ``image``).
        widths: ``[N]`` int64 output widths, each ``<= out_width``.
        height: output height.
        out_width: padded output width (a Python int).
        fill: value of the padding columns.

    Returns:
        ``[N, C, height, out_width]`` tensor of ``image``'s dtype.
    """
    n = polygons.shape[0]
    c, h, w = image.shape
    if n == 0:
        return image.new_zeros((0, c, height, out_width))
    src = polygons.to(torch.float64 if image.device.type == "cpu" else torch.float32)
    wd = widths.to(src.dtype)
    zeros = torch.zeros_like(wd)
    hh = torch.full_like(wd, float(height))
    dst = torch.stack(
        [
            torch.stack([zeros, zeros], 1),
            torch.stack([wd, zeros], 1),
            torch.stack([wd, hh], 1),
            torch.stack([zeros, hh], 1),
        ],
        dim=1,
    )  # [N, 4, 2]
    hom = _homographies(src, dst)  # output pixel -> page pixel
    ys, xs = torch.meshgrid(
        torch.arange(height, dtype=src.dtype, device=src.device) + 0.5,
        torch.arange(out_width, dtype=src.dtype, device=src.device) + 0.5,
        indexing="ij",
    )
    grid = torch.stack([xs, ys, torch.ones_like(xs)], dim=-1).view(1, -1, 3)  # [1, height*out_width, 3]
    mapped = grid @ hom.transpose(1, 2)  # [N, P, 3]
    xy = mapped[..., :2] / mapped[..., 2:3]
    norm = torch.tensor([2.0 / w, 2.0 / h], dtype=src.dtype, device=src.device)
    xy = (xy * norm - 1.0).view(n, height, out_width, 2).to(image.dtype)
    crops = F.grid_sample(
        image[None].expand(n, -1, -1, -1), xy, mode="bilinear", padding_mode="border", align_corners=False
    )
    return _mask_columns(crops, widths.to(crops.device), fill)
