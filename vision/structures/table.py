"""Tables and block kinds: ``Table`` (a grid of ``TableCell``), and the names a ``Block.kind`` may take.

A table is a grid of ``n_rows x n_cols`` positions; each cell covers ``row_span x col_span`` of them from
its top-left ``(row, col)``, and every position is covered by exactly one cell (empty cells have no words).
The first ``header_rows`` rows are the table's header. On a page, the i-th block of kind ``"table"`` holds
the words of ``page.tables[i]`` (so plain text keeps them), and exporters draw the grid instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vision.structures.geometry import BBox, union_box

__all__ = ["BLOCK_KINDS", "Table", "TableCell"]

#: The kinds of a block (``Block.kind``): text roles, and the places of tables, figures and formulas.
BLOCK_KINDS = (
    "title",
    "heading",
    "paragraph",
    "list_item",
    "caption",
    "page_header",
    "page_footer",
    "footnote",
    "table",
    "figure",
    "formula",
)


@dataclass
class TableCell:
    """One cell: its top-left grid position, its spans, its words in reading order and whether it heads."""

    row: int
    col: int
    words: list = field(default_factory=list)  # list[Word]; typed loosely to keep this module import-free
    row_span: int = 1
    col_span: int = 1
    header: bool = False
    geometry: BBox | None = None

    def __post_init__(self) -> None:
        if self.geometry is None and self.words:
            self.geometry = union_box(w.geometry for w in self.words)

    @property
    def text(self) -> str:
        """The words joined by single spaces."""
        return " ".join(w.value for w in self.words)


@dataclass
class Table:
    """A table: its box on the page, grid size, cells and number of header rows."""

    geometry: BBox
    n_rows: int
    n_cols: int
    cells: list[TableCell] = field(default_factory=list)
    header_rows: int = 0

    def rows(self) -> list[list[TableCell]]:
        """Cells grouped by the row they start in, each row left to right."""
        out: list[list[TableCell]] = [[] for _ in range(self.n_rows)]
        for cell in sorted(self.cells, key=lambda c: (c.row, c.col)):
            out[cell.row].append(cell)
        return out

    def to_html(self) -> str:
        """The table as an HTML ``<table>`` (see :func:`vision.export.html.table_to_html`)."""
        from vision.export.html import table_to_html

        return table_to_html(self)

    def has_spans(self) -> bool:
        """Whether any cell spans more than one row or column."""
        return any(c.row_span > 1 or c.col_span > 1 for c in self.cells)

    def check(self) -> None:
        """Raise ``ValueError`` unless the cells tile the grid exactly (each position covered once)."""
        seen = [[False] * self.n_cols for _ in range(self.n_rows)]
        for c in self.cells:
            if c.row_span < 1 or c.col_span < 1 or c.row < 0 or c.col < 0:
                raise ValueError(f"cell at ({c.row}, {c.col}): bad position or span")
            if c.row + c.row_span > self.n_rows or c.col + c.col_span > self.n_cols:
                raise ValueError(f"cell at ({c.row}, {c.col}) runs off the {self.n_rows}x{self.n_cols} grid")
            for r in range(c.row, c.row + c.row_span):
                for k in range(c.col, c.col + c.col_span):
                    if seen[r][k]:
                        raise ValueError(f"grid position ({r}, {k}) is covered twice")
                    seen[r][k] = True
        if not all(all(row) for row in seen):
            raise ValueError("some grid positions are covered by no cell")
