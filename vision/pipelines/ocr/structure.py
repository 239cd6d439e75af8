"""Document structure of finished pages: tables (``page.tables``) and block kinds, after the layout stage.

Tables: the layout stage reads a table row by row and joins each row's cells into one line, so a table is
a run of at least :data:`MIN_ROWS` consecutive single-line blocks whose lines hold a gap of at least
:data:`CELL_GAP` heights (between cells) and lie one under the other, at most two heights apart. Its words
go to :func:`~vision.pipelines.ocr.table_structure.recognize_table`, with the page's horizontal rules and their
gaps (a gap under a cell joins it to the row below); the run of blocks becomes one block of kind ``"table"``.

Figures: large non-text areas of the page image (:func:`~vision.pipelines.ocr.regions.find_regions`, run
by the layout stage with ``LayoutOptions(regions=True)``, the default, or here when the stage is built
with ``layout_regions=False``) are ``Region(kind="figure")`` in ``page.regions``, and each also becomes an empty block of kind ``"figure"`` (its geometry the
region's) placed in the reading order before the first block that starts below the figure's top and
overlaps it horizontally (its caption, when the caption is under it), else at the end. Then
:func:`~vision.pipelines.ocr.block_kinds.classify_blocks` names the other blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.ops.median import median
from vision.pipelines.ocr.block_kinds import classify_blocks
from vision.pipelines.ocr.regions import find_regions
from vision.pipelines.ocr.table_structure import TableOptions, recognize_table, rule_segments, ruling_lines
from vision.structures import Block, Line, Page, Region

__all__ = ["CELL_GAP", "MIN_ROWS", "StructureOptions", "StructureStage", "find_tables"]

MIN_ROWS = 3  # two aligned lines are as often a form's label/value pair as a table
CELL_GAP = 1.5  # a space between words is under 1 height; a cell gap is wider (gutters use 1.0 and more)


@dataclass(frozen=True)
class StructureOptions:
    """What the structure stage does.

    Attributes:
        kinds: name blocks (title, heading, list item, caption, page header/footer, footnote).
        tables: find tables and recognise their cells.
        figures: find figures (large non-text areas) and place them in the reading order as blocks.
        table: thresholds of table structure recognition.
    """

    kinds: bool = True
    tables: bool = True
    figures: bool = True
    table: TableOptions = field(default_factory=TableOptions)


def _is_row(block: Block, size: tuple[int, int]) -> bool:
    if len(block.lines) != 1 or len(block.lines[0].words) < 2:
        return False
    h, w = size
    g = np.array([wd.geometry for wd in block.lines[0].words]) * [w, h, w, h]
    height = median(g[:, 3] - g[:, 1])
    return bool((g[1:, 0] - g[:-1, 2] >= CELL_GAP * height).any())


def find_tables(page: Page) -> list[tuple[int, int]]:
    """``[start, end)`` block index ranges of the tables of ``page`` (see the module docstring)."""
    size = page.dimensions
    runs, start = [], None
    for k, block in enumerate(page.blocks + [Block([])]):
        row = k < len(page.blocks) and _is_row(block, size)
        if row and start is not None:
            prev, cur = page.blocks[k - 1].geometry, block.geometry
            assert prev is not None and cur is not None
            near = cur[1] >= prev[1] and cur[1] - prev[3] <= 2 * (prev[3] - prev[1])
            if not near:
                if k - start >= MIN_ROWS:
                    runs.append((start, k))
                start = k
        elif row:
            start = k
        elif start is not None:
            if k - start >= MIN_ROWS:
                runs.append((start, k))
            start = None
    return runs


def _with_tables(page: Page, options: StructureOptions) -> None:
    runs = find_tables(page)
    if not runs:
        return
    h, w = page.dimensions
    rules = ruling_lines(page.image) if page.image is not None else np.zeros(0)
    segments = rule_segments(page.image, rules) if page.image is not None else []
    blocks, tables, last = [], [], 0
    for start, end in runs:
        blocks += page.blocks[last:start]
        lines: list[Line] = [ln for b in page.blocks[start:end] for ln in b.lines]
        words = [wd for ln in lines for wd in ln.words]
        boxes = np.array([wd.geometry for wd in words]) * [w, h, w, h]
        y0, y1 = boxes[:, 1].min(), boxes[:, 3].max()
        near = np.flatnonzero((rules > y0 - h * 0.02) & (rules < y1 + h * 0.02))
        tables.append(recognize_table(words, boxes, rules[near], options.table, [segments[k] for k in near]))
        blocks.append(Block(lines, kind="table"))
        last = end
    page.blocks = blocks + page.blocks[last:]
    page.tables = tables


def place_figures(blocks: list[Block], figures: list[Region]) -> list[Block]:
    """``blocks`` with an empty block of kind ``"figure"`` per figure, in reading order (module docstring)."""
    out = list(blocks)
    for fig in sorted(figures, key=lambda r: (r.geometry[1], r.geometry[0])):
        x0, y0, x1, y1 = fig.geometry
        at = len(out)
        for k, b in enumerate(out):
            g = b.geometry
            if g is not None and b.kind != "figure" and g[1] >= y0 and min(g[2], x1) > max(g[0], x0):
                at = k
                break
        out.insert(at, Block([], geometry=fig.geometry, kind="figure"))
    return out


def _with_figures(page: Page, find: bool) -> None:
    figures = [r for r in page.regions if r.kind == "figure"]
    if find and not figures and page.image is not None:
        words = page.words
        boxes = np.array([w.geometry for w in words], dtype=np.float64).reshape(-1, 4)
        figures = find_regions(page.image, boxes)
        page.regions = page.regions + figures
    if figures:
        page.blocks = place_figures(page.blocks, figures)


class StructureStage:
    """Pages -> the same pages with tables found and block kinds set (see the module docstring)."""

    def __init__(self, options: StructureOptions = StructureOptions(), *, layout_regions: bool = False) -> None:
        self.options = options
        self.find_figures = not layout_regions  # the layout stage already looked (LayoutOptions.regions)

    def __call__(self, pages: list[Page]) -> list[Page]:
        for page in pages:
            if self.options.tables:
                _with_tables(page, self.options)
            if self.options.figures:
                _with_figures(page, self.find_figures)
            if self.options.kinds:
                page.blocks = classify_blocks(page.blocks)
        return pages
