"""Large non-text regions of a page (figures, photos, logos, dark bars), found on the image beside the words."""

from __future__ import annotations

from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.structures import Region

if TYPE_CHECKING:
    from vision.pipelines.ocr.reading_order import LayoutOptions

__all__ = ["REGION_MAX_WORDS", "find_regions"]

REGION_MAX_WORDS = 0.05  # figures hold at most a few labels; shaded tables and form boxes hold words


def find_regions(
    image: np.ndarray, word_boxes: np.ndarray, options: LayoutOptions | None = None
) -> list[Region]:
    """Large non-text areas (figures, photos, logos, dark bars) as ``Region(kind="figure")``.

    Works at 1/8 scale: pixels that differ from the page background (its median grey) by more than 48 grey
    levels (a threshold above scanner noise and JPEG ringing, below any drawn content) are closed into
    blobs after blanking the word boxes. A blob is kept when its box covers ``region_min_area`` of the page
    or more, its ink (before closing) fills at least a quarter of that box (drops ruled tables and form
    grids) and words cover less than :data:`REGION_MAX_WORDS` of it (drops shaded tables and boxed form
    fields, which hold text). Measured with ``benchmarks/regions_check.py``.

    Args:
        image: ``(H, W, 3)`` uint8 upright page.
        word_boxes: ``[N, 4]`` relative boxes of the words on that page.
    """
    if options is None:
        from vision.pipelines.ocr.reading_order import LayoutOptions

        options = LayoutOptions()
    h, w = image.shape[:2]
    scale = 8
    small = cv2.resize(
        cv2.cvtColor(image, cv2.COLOR_RGB2GRAY),
        (max(w // scale, 1), max(h // scale, 1)),
        interpolation=cv2.INTER_AREA,
    )
    sh, sw = small.shape
    ink = (np.abs(small.astype(np.int16) - int(np.median(small))) > 48).astype(np.uint8)
    words = np.zeros_like(ink)
    for x0, y0, x1, y1 in np.asarray(word_boxes, dtype=np.float64).reshape(-1, 4):
        words[int(y0 * sh) : int(np.ceil(y1 * sh)) + 1, int(x0 * sw) : int(np.ceil(x1 * sw)) + 1] = 1
    ink *= 1 - words
    blobs = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(blobs, connectivity=8)
    regions = []
    for x, y, bw, bh, _ in stats[1:count]:
        if bw * bh < options.region_min_area * sw * sh or ink[y : y + bh, x : x + bw].mean() < 0.25:
            continue
        if words[y : y + bh, x : x + bw].mean() >= REGION_MAX_WORDS:
            continue
        regions.append(Region("figure", (x / sw, y / sh, min((x + bw) / sw, 1.0), min((y + bh) / sh, 1.0))))
    return regions
