"""Layout: words -> lines -> blocks, blocks in reading order, and large non-text regions.

All decisions are made on pixel boxes of an upright page (the pipeline deskews and rotates first), and are
returned as index groups so that the caller can attach any geometry to the result.

Rules (thresholds in units of text height, so they hold at any resolution):

* **Lines**: words taken left to right; a word continues a line when it overlaps the line's last word
  vertically by at least ``line_overlap`` of the smaller height and starts at most ``word_gap`` heights
  after it. Following the last word (not the first) lets a line drift a little with residual skew; the gap
  limit splits rows that cross a column gutter or a form's label/value space.
* **Blocks**: a line joins the nearest line above it when the vertical gap is at most ``block_gap`` heights,
  their horizontal extents overlap and their heights differ by at most ``height_ratio`` (titles stay apart).
  Each line takes at most one line below it, so a block is a simple top-to-bottom chain.
* **Reading order**: recursive XY-cut over the blocks: horizontal bands top to bottom, then columns left to
  right. Bands that are running-text columns with the same gutter are merged first, so columns are read
  whole; rows of single-line blocks (forms) stay rows, read label then value.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.structures import Block, Line, Region, Word

__all__ = ["LayoutOptions", "group_lines", "group_blocks", "order_blocks", "build_blocks", "find_regions"]


@dataclass(frozen=True)
class LayoutOptions:
    """Thresholds of the layout rules (see the module docstring); heights are text heights.

    Attributes:
        line_overlap: least vertical overlap (fraction of the smaller height) of consecutive words in a line.
        word_gap: largest horizontal gap between consecutive words of a line, in heights.
        block_gap: largest vertical gap between consecutive lines of a block, in heights.
        height_ratio: largest ratio of line heights within a block.
        regions: also report large non-text areas (figures, photos, logos) as ``Region(kind="figure")``.
        region_min_area: smallest such area, as a fraction of the page.
    """

    line_overlap: float = 0.5
    word_gap: float = 2.5
    block_gap: float = 1.0
    height_ratio: float = 1.6
    regions: bool = False
    region_min_area: float = 0.01


def _vertical_overlap(a: np.ndarray, b: np.ndarray) -> float:
    return float(min(a[3], b[3]) - max(a[1], b[1]))


def group_lines(boxes: np.ndarray, options: LayoutOptions = LayoutOptions()) -> list[list[int]]:
    """Group word boxes into lines.

    Args:
        boxes: ``[N, 4]`` pixel ``x0, y0, x1, y1`` of words on an upright page.

    Returns:
        Lines as lists of word indices, each left to right; lines ordered by their top edge.
    """
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    heights = np.maximum(boxes[:, 3] - boxes[:, 1], 1e-6)
    lines: list[list[int]] = []
    for i in np.lexsort((boxes[:, 1], boxes[:, 0])):
        best, best_overlap = -1, 0.0
        for k, line in enumerate(lines):
            last = line[-1]
            h = min(heights[i], heights[last])
            overlap = _vertical_overlap(boxes[i], boxes[last]) / h
            gap = boxes[i, 0] - boxes[last, 2]
            if overlap >= options.line_overlap and -0.5 * h <= gap <= options.word_gap * h and overlap > best_overlap:
                best, best_overlap = k, overlap
        if best < 0:
            lines.append([int(i)])
        else:
            lines[best].append(int(i))
    return sorted(lines, key=lambda ln: (boxes[ln, 1].min(), boxes[ln, 0].min()))


def group_blocks(line_boxes: np.ndarray, options: LayoutOptions = LayoutOptions()) -> list[list[int]]:
    """Chain lines into blocks (paragraphs, column pieces, form groups).

    Args:
        line_boxes: ``[L, 4]`` pixel boxes of lines, ordered by their top edge.

    Returns:
        Blocks as lists of line indices, top to bottom.
    """
    b = np.asarray(line_boxes, dtype=np.float64).reshape(-1, 4)
    heights = np.maximum(b[:, 3] - b[:, 1], 1e-6)
    parent_of: dict[int, int] = {}
    has_child: set[int] = set()
    for j in range(len(b)):
        best, best_gap = -1, np.inf
        for i in range(len(b)):
            if i == j or i in has_child or b[i, 1] >= b[j, 1]:
                continue
            h = min(heights[i], heights[j])
            gap = b[j, 1] - b[i, 3]
            x_overlap = min(b[i, 2], b[j, 2]) - max(b[i, 0], b[j, 0])
            ratio = max(heights[i], heights[j]) / h
            if -0.5 * h <= gap <= options.block_gap * h and x_overlap > 0 and ratio <= options.height_ratio \
                    and gap < best_gap:
                best, best_gap = i, gap
        if best >= 0:
            parent_of[j] = best
            has_child.add(best)
    children = {p: c for c, p in parent_of.items()}
    blocks: list[list[int]] = []
    for j in range(len(b)):
        if j not in parent_of:
            chain, k = [j], j
            while k in children:
                k = children[k]
                chain.append(k)
            blocks.append(chain)
    return blocks


def _gaps(lo: np.ndarray, hi: np.ndarray) -> list[tuple[float, float]]:
    """Empty intervals ``(start, end)`` between the union of ``[lo_i, hi_i]`` intervals."""
    order = np.argsort(lo)
    gaps, reach = [], -np.inf
    for i in order:
        if np.isfinite(reach) and lo[i] > reach:
            gaps.append((float(reach), float(lo[i])))
        reach = max(reach, hi[i])
    return gaps


def _widest_gap(lo: np.ndarray, hi: np.ndarray) -> tuple[float, float] | None:
    gaps = _gaps(lo, hi)
    return max(gaps, key=lambda g: g[1] - g[0]) if gaps else None


def order_blocks(block_boxes: np.ndarray, lines_per_block: np.ndarray) -> list[int]:
    """Reading order of blocks by recursive XY-cut (see the module docstring for the column rule).

    At each level the blocks are cut into horizontal bands at every vertical whitespace gap; consecutive
    bands that are both running-text columns (a vertical gutter, blocks of two lines or more on average on
    each side) with overlapping gutters are merged back, so paragraph breaks that happen to line up across
    columns do not interleave the columns. A single band is cut at its widest vertical gutter.

    Args:
        block_boxes: ``[B, 4]`` pixel boxes of blocks.
        lines_per_block: ``[B]`` number of lines in each block.

    Returns:
        Block indices in reading order.
    """
    boxes = np.asarray(block_boxes, dtype=np.float64).reshape(-1, 4)
    nlines = np.asarray(lines_per_block, dtype=np.float64).reshape(-1)

    def gutter(idx: np.ndarray) -> tuple[float, float] | None:
        gap = _widest_gap(boxes[idx, 0], boxes[idx, 2])
        if gap is None:
            return None
        cut = (gap[0] + gap[1]) / 2
        left, right = nlines[idx[boxes[idx, 2] <= cut]], nlines[idx[boxes[idx, 0] >= cut]]
        return gap if left.mean() >= 2 and right.mean() >= 2 else None

    def bands(idx: np.ndarray) -> list[np.ndarray]:
        cuts = [(a + b) / 2 for a, b in _gaps(boxes[idx, 1], boxes[idx, 3])]
        centre = (boxes[idx, 1] + boxes[idx, 3]) / 2
        found = [idx[np.searchsorted(cuts, centre) == k] for k in range(len(cuts) + 1)]
        merged = [found[0]]
        for band in found[1:]:
            g, h = gutter(merged[-1]), gutter(band)
            if g is not None and h is not None and min(g[1], h[1]) > max(g[0], h[0]):
                merged[-1] = np.concatenate([merged[-1], band])
            else:
                merged.append(band)
        return merged

    def visit(idx: np.ndarray) -> list[int]:
        if len(idx) <= 1:
            return [int(i) for i in idx]
        parts = bands(idx)
        if len(parts) > 1:
            return [i for part in parts for i in visit(part)]
        gap = _widest_gap(boxes[idx, 0], boxes[idx, 2])
        if gap is not None:
            cut = (gap[0] + gap[1]) / 2
            return visit(idx[boxes[idx, 2] <= cut]) + visit(idx[boxes[idx, 0] >= cut])
        sub = boxes[idx]
        return [int(i) for i in idx[np.lexsort((sub[:, 0], sub[:, 1]))]]

    return visit(np.arange(len(boxes)))


def _union(boxes: np.ndarray) -> np.ndarray:
    return np.array([boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 2].max(), boxes[:, 3].max()])


def build_blocks(words: list[Word], layout_boxes: np.ndarray,
                 options: LayoutOptions = LayoutOptions()) -> list[Block]:
    """Arrange words into blocks of lines in reading order.

    Args:
        words: recognised words; their own geometry is kept as is (it may refer to the unrotated page).
        layout_boxes: ``[N, 4]`` pixel boxes of the same words on the upright page, used for the decisions.

    Returns:
        Blocks in reading order; line and block geometry is the union of their words' geometry.
    """
    if not words:
        return []
    boxes = np.asarray(layout_boxes, dtype=np.float64).reshape(-1, 4)
    lines = group_lines(boxes, options)
    line_boxes = np.stack([_union(boxes[ln]) for ln in lines])
    blocks = group_blocks(line_boxes, options)
    block_boxes = np.stack([_union(line_boxes[bl]) for bl in blocks])
    order = order_blocks(block_boxes, np.array([len(bl) for bl in blocks]))
    return [Block([Line([words[i] for i in lines[k]]) for k in blocks[j]]) for j in order]


def find_regions(image: np.ndarray, word_boxes: np.ndarray, options: LayoutOptions = LayoutOptions()) -> list[Region]:
    """Large non-text areas (figures, photos, logos, dark bars) as ``Region(kind="figure")``.

    Works at 1/8 scale: pixels that differ from the page background (its median grey) by more than 48 grey
    levels (a threshold above scanner noise and JPEG ringing, below any drawn content) are closed into
    blobs after blanking the word boxes; blobs covering ``region_min_area`` of the page or more and filling
    at least a quarter of their box are kept (the density test drops table grids and long rules).

    Args:
        image: ``(H, W, 3)`` uint8 upright page.
        word_boxes: ``[N, 4]`` relative boxes of the words on that page.
    """
    h, w = image.shape[:2]
    scale = 8
    small = cv2.resize(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), (max(w // scale, 1), max(h // scale, 1)),
                       interpolation=cv2.INTER_AREA)
    sh, sw = small.shape
    ink = (np.abs(small.astype(np.int16) - int(np.median(small))) > 48).astype(np.uint8)
    for x0, y0, x1, y1 in np.asarray(word_boxes, dtype=np.float64).reshape(-1, 4):
        ink[int(y0 * sh):int(np.ceil(y1 * sh)) + 1, int(x0 * sw):int(np.ceil(x1 * sw)) + 1] = 0
    ink = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    regions = []
    for x, y, bw, bh, area in stats[1:count]:
        if bw * bh >= options.region_min_area * sw * sh and area >= 0.25 * bw * bh:
            regions.append(Region("figure", (x / sw, y / sh, min((x + bw) / sw, 1.0), min((y + bh) / sh, 1.0))))
    return regions
