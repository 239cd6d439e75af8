"""TEDS, tree-edit-distance-based similarity of two HTML tables (Zhong et al., "Image-based table
recognition: data, model, and evaluation", ECCV 2020).

``TEDS(a, b) = 1 - EditDist(a, b) / max(|a|, |b|)`` over the trees ``table > thead|tbody > tr > td``
(``th`` is read as ``td``), where ``|t|`` counts nodes, inserting or deleting a node costs 1, and renaming
costs 1 between different tags, 1 between cells whose ``colspan`` or ``rowspan`` differ, and otherwise
(two cells with the same spans) the normalized Levenshtein distance of their texts (0 for
structure-only TEDS). Cell text is the text inside the cell with inner markup (``<b>``, ``<sup>``) dropped
and whitespace collapsed. The tree edit distance is APTED (``apted`` package).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

from apted import APTED, Config
from rapidfuzz.distance import Levenshtein

__all__ = ["TableNode", "parse_table", "teds"]

_KEPT = {"table", "thead", "tbody", "tr", "td"}


@dataclass
class TableNode:
    """One node of a table tree: its tag, spans (cells) and text (cells)."""

    tag: str
    colspan: int = 1
    rowspan: int = 1
    text: str = ""
    children: list[TableNode] = field(default_factory=list)

    def size(self) -> int:
        """Number of nodes in the tree under (and including) this one."""
        return 1 + sum(c.size() for c in self.children)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root: TableNode | None = None
        self.stack: list[TableNode] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = "td" if tag == "th" else tag
        if tag not in _KEPT or (self.root is not None and not self.stack):
            return  # only the first table counts
        spans = {k: int(v) for k, v in attrs if k in ("colspan", "rowspan") and v and v.strip().isdigit()}
        node = TableNode(tag, spans.get("colspan", 1), spans.get("rowspan", 1))
        if self.stack:
            self.stack[-1].children.append(node)
        elif tag == "table":
            self.root = node
        else:
            return
        self.stack.append(node)
        if tag == "td":
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        tag = "td" if tag == "th" else tag
        if tag not in _KEPT or not self.stack or self.stack[-1].tag != tag:
            return
        node = self.stack.pop()
        if tag == "td" and self.cell is not None:
            node.text = " ".join("".join(self.cell).split())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def parse_table(html: str) -> TableNode:
    """The tree of the first ``<table>`` of ``html`` (``ValueError`` when there is none)."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    if builder.root is None:
        raise ValueError("no <table> in the HTML")
    return builder.root


class _Costs(Config):
    def __init__(self, structure_only: bool) -> None:
        self.structure_only = structure_only

    def rename(self, a: TableNode, b: TableNode) -> float:
        if a.tag != b.tag or (a.colspan, a.rowspan) != (b.colspan, b.rowspan):
            return 1.0
        if a.tag != "td" or self.structure_only:
            return 0.0
        return Levenshtein.normalized_distance(a.text, b.text)

    def children(self, node: TableNode) -> list[TableNode]:
        return node.children


def teds(pred: str | TableNode, true: str | TableNode, *, structure_only: bool = False) -> float:
    """TEDS in [0, 1] between a predicted and a true table (HTML text or parsed trees)."""
    a = parse_table(pred) if isinstance(pred, str) else pred
    b = parse_table(true) if isinstance(true, str) else true
    distance = APTED(a, b, _Costs(structure_only)).compute_edit_distance()
    return 1.0 - distance / max(a.size(), b.size())

