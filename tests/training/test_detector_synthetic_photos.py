"""``benchmarks/detector_synthetic.py``'s close-up receipt photos: the word boxes follow the page's warp."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from detector_synthetic import photographed  # noqa: E402


def test_photographed_boxes_cover_the_moved_ink() -> None:
    page = np.full((1400, 700, 3), 255, np.uint8)
    boxes = np.array([[100, 200, 400, 260], [450, 900, 650, 940]], np.float32)
    for x0, y0, x1, y1 in boxes.astype(int):
        page[y0:y1, x0:x1] = 0
    for seed in range(5):
        image, moved = photographed(page, boxes, np.random.default_rng(seed))
        assert moved.shape == (2, 4)
        assert image.shape[0] >= 1024 and image.shape[1] >= 1024 * 700 // 1400
        grey = image.mean(axis=2)
        for x0, y0, x1, y1 in moved:
            inner = grey[int(y0) + 4 : int(y1) - 3, int(x0) + 6 : int(x1) - 5]
            assert inner.size and np.median(inner) < 110  # the box lies on the moved ink
            ring = np.concatenate([grey[max(int(y0) - 12, 0) : int(y0) - 4, int(x0) : int(x1)].ravel(),
                                   grey[int(y1) + 4 : int(y1) + 12, int(x0) : int(x1)].ravel()])
            assert np.median(ring) > np.median(inner) + 60  # and the page just outside it is lighter
