"""Table structure from word boxes and ruling lines: rows, columns, column spans, header rows.

Steps (distances in units of the median word height ``h``, so they hold at any resolution):

1. **Phrases**: words of one row less than ``phrase_gap`` apart (a cell's line of text).
2. **Bands**: phrases that overlap vertically by half the smaller height (one line of the table).
3. **Columns**: x-runs, at least ``column_gap`` wide, that the phrases of at most ``sparse`` of the bands
   cover (a spanning header cell bridges a gap in one band or two). Each phrase then covers the columns its
   x-extent overlaps (more than one: a column span).
4. **Rows**: a band continues the row above (a wrapped cell) when no horizontal rule lies between them, it
   is at most ``wrap_gap`` below, it has at most half as many phrases as the row's first band, and each of its phrases
   covers exactly the columns of a phrase of that row; otherwise it starts a row.
5. **Header rows**: the rows above the first horizontal rule inside the table when there is one; else the
   first row, and the rows after it while the row above holds a column span (stacked headers).
6. **Section rows, two-level headers and cells spanning rows** (:mod:`vision.pipelines.ocr.table_spans`): a
   first-column label centred between two rows spans both; with ``segments``, a body cell spans the empty
   positions below (or above) it that a gap in the rule between the rows leaves open.

Ruling lines come from :func:`ruling_lines` (OpenCV morphology on the table image) and the x-extent of each
from :func:`rule_segments`, when an image is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.ops.median import median
from vision.pipelines.ocr.table_spans import centred_labels, row_spans, section_rows, two_level_header
from vision.structures import Table, TableCell, Word
from vision.structures.geometry import union_box

__all__ = ["TableOptions", "recognize_table", "rule_segments", "ruling_lines"]


@dataclass(frozen=True)
class TableOptions:
    """Thresholds of :func:`recognize_table`, in median word heights (see the module docstring).

    ``phrase_gap`` is about twice a word space between padded OCR boxes: at 1.0, the narrow numeric
    columns of tables_dev merged into one phrase (structure-only TEDS 0.864 -> 0.903 at 0.6, the one
    threshold chosen on that set; 0.5 and 0.8 give 0.903 and 0.893).
    """

    phrase_gap: float = 0.6
    word_column_gap: float = 0.4
    wrap_gap: float = 0.6
    sparse: float = 0.1
    column_gap: float = 0.5


def ruling_lines(image: np.ndarray, min_length: float = 0.3) -> np.ndarray:
    """y (pixels) of horizontal rules at least ``min_length`` of the image wide: dark pixels opened with a
    long horizontal kernel, rows where the opening leaves ink. ``image``: ``(H, W, 3)`` or ``(H, W)`` uint8."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    ink = (gray < 128).astype(np.uint8)
    length = max(int(gray.shape[1] * min_length), 8)
    # The kernel is one row high, so rows open independently; a row keeps ink only with a run of `length`
    # dark pixels (half of it where the run touches the image's edge), so only rows holding that many are
    # opened: the same rows as opening the whole page, in 2.6 against 10.4 ms on a letter page at 150 dpi.
    rows = np.flatnonzero(np.count_nonzero(ink, axis=1) >= min(length // 2, ink.shape[1]))
    if len(rows):
        rows = rows[cv2.morphologyEx(ink[rows], cv2.MORPH_OPEN, np.ones((1, length), np.uint8)).any(axis=1)]
    if len(rows) == 0:
        return np.zeros(0)
    groups = np.split(rows, np.nonzero(np.diff(rows) > 1)[0] + 1)  # a thick rule is several pixel rows
    return np.array([g.mean() for g in groups])


def rule_segments(image: np.ndarray, rules: np.ndarray, min_length: int = 8) -> list[np.ndarray]:
    """For each rule y of ``rules`` (from :func:`ruling_lines`), the ``[K, 2]`` x-intervals (pixels) where it
    has ink: the pixel rows within 1 of ``y`` opened with a ``min_length`` kernel (text strokes touching the
    rule do not fill a gap). A gap in a rule shows a cell spanning the rows on both sides."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    out = []
    for y in np.asarray(rules, dtype=np.float64).reshape(-1):
        y0, y1 = max(int(np.floor(y)) - 1, 0), min(int(np.ceil(y)) + 2, gray.shape[0])
        ink = (gray[y0:y1] < 128).astype(np.uint8)
        line = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, min_length), np.uint8)).any(axis=0)
        edges = np.flatnonzero(np.diff(np.r_[0, line.astype(np.int8), 0]))
        out.append(edges.reshape(-1, 2).astype(np.float64))
    return out


def _phrases(b: np.ndarray, h: float, gap: float) -> list[list[int]]:
    """Words (pixel boxes ``b``) grouped into phrases: same row, less than ``gap`` heights apart."""
    from vision.pipelines.ocr.reading_order import LayoutOptions, group_lines

    return group_lines(b, LayoutOptions(word_gap=gap, gutter_width=0))


def _bands(pb: np.ndarray) -> list[list[int]]:
    """Phrase boxes ``[P, 4]`` grouped into bands (vertical overlap >= half the smaller height)."""
    order = np.argsort((pb[:, 1] + pb[:, 3]) / 2, kind="stable")
    bands: list[list[int]] = []
    top = bottom = 0.0
    for i in order:
        y0, y1 = pb[i, 1], pb[i, 3]
        if bands and min(y1, bottom) - max(y0, top) >= 0.5 * min(y1 - y0, bottom - top):
            bands[-1].append(int(i))
            top, bottom = min(top, y0), max(bottom, y1)
        else:
            bands.append([int(i)])
            top, bottom = y0, y1
    return bands


def _separators(pb: np.ndarray, bands: list[list[int]], sparse: float, min_gap: float) -> np.ndarray:
    """x of column separators: the middles of the x-runs covered by the phrases of at most ``sparse`` of
    the bands (spanning header cells cover a gap in a few bands only), at least ``min_gap`` pixels wide."""
    x0, x1 = int(np.floor(pb[:, 0].min())), int(np.ceil(pb[:, 2].max()))
    cover = np.zeros(x1 - x0 + 2, dtype=np.int64)
    for band in bands:
        hit = np.zeros_like(cover, dtype=bool)
        for i in band:
            hit[int(pb[i, 0]) - x0 : int(np.ceil(pb[i, 2])) - x0 + 1] = True
        cover += hit
    empty = cover <= sparse * len(bands)
    edges = np.flatnonzero(np.diff(np.r_[0, empty.astype(np.int8), 0]))
    runs = edges.reshape(-1, 2)  # [start, end) of empty runs
    inner = (runs[:, 0] > 0) & (runs[:, 1] < len(cover) - 1) & (runs[:, 1] - runs[:, 0] >= min_gap)
    return x0 + runs[inner].mean(axis=1)


def _split_phrases(phrases: list[list[int]], b: np.ndarray, seps: np.ndarray) -> list[list[int]]:
    """Phrases cut wherever a word-level column separator (``seps``) lies between two of their words."""
    out = []
    for p in phrases:
        p = sorted(p, key=lambda i: b[i, 0])
        part = [p[0]]
        for prev, cur in zip(p, p[1:]):
            if ((seps > b[prev, 2]) & (seps < b[cur, 0])).any():
                out.append(part)
                part = []
            part.append(cur)
        out.append(part)
    return out


def _columns(x0: float, x1: float, seps: np.ndarray) -> tuple[int, int]:
    """First and last column a phrase from ``x0`` to ``x1`` covers."""
    return int(np.searchsorted(seps, x0)), int(np.searchsorted(seps, x1))


def recognize_table(
    words: list[Word],
    boxes: np.ndarray,
    rules: np.ndarray | None = None,
    options: TableOptions = TableOptions(),
    segments: Sequence[np.ndarray] | None = None,
) -> Table:
    """The table formed by ``words`` (see the module docstring).

    Args:
        words: the words inside the table.
        boxes: ``[N, 4]`` pixel boxes of the same words on the upright page.
        rules: y (pixels, same frame) of horizontal ruling lines, e.g. from :func:`ruling_lines`.
        segments: for each rule, the ``[K, 2]`` x-intervals where it has ink (:func:`rule_segments`);
            without them every rule is taken to run across the table.

    Returns:
        A :class:`Table` whose cells tile its grid (empty positions get empty cells).
    """
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if len(words) == 0:
        return Table((0.0, 0.0, 0.0, 0.0), 0, 0)
    h = median(b[:, 3] - b[:, 1])
    phrases = _split_phrases(_phrases(b, h, options.phrase_gap), b, _separators(b, _bands(b), options.sparse, options.word_column_gap * h))
    pb = np.array([[b[p, 0].min(), b[p, 1].min(), b[p, 2].max(), b[p, 3].max()] for p in phrases])
    bands = _bands(pb)
    seps = _separators(pb, bands, options.sparse, options.column_gap * h)
    rules = np.zeros(0) if rules is None else np.asarray(rules, dtype=np.float64)
    rows: list[list[tuple[int, int, list[int]]]] = []  # per row: (first col, last col, phrase indices)
    row_top: list[float] = []
    row_bottom: list[float] = []
    first_fill = 0
    prev_bottom = -np.inf
    rank = np.zeros(len(phrases))  # a cell's phrases read band by band, left to right in a band
    for r, band in enumerate(sorted(bands, key=lambda bd: pb[bd, 1].min())):
        rank[band] = r + pb[band, 0] / (pb[:, 2].max() + 1.0)
    for band in sorted(bands, key=lambda bd: pb[bd, 1].min()):
        band = sorted(band, key=lambda i: pb[i, 0])
        spans = [_columns(pb[i, 0], pb[i, 2], seps) for i in band]
        top = pb[band, 1].min()
        ruled = bool(((rules > prev_bottom) & (rules < top)).any())
        if rows and not ruled and top - prev_bottom <= options.wrap_gap * h and 2 * len(band) <= first_fill:
            cells = {(c0, c1): k for k, (c0, c1, _) in enumerate(rows[-1])}
            if all(s in cells for s in spans):
                for i, s in zip(band, spans):
                    rows[-1][cells[s]][2].append(i)
                prev_bottom = max(prev_bottom, pb[band, 3].max())
                row_bottom[-1] = prev_bottom
                continue
        merged: list[tuple[int, int, list[int]]] = []
        for i, (c0, c1) in zip(band, spans):
            if merged and c0 <= merged[-1][1]:  # two phrases in one column: one cell
                m0, m1, idx = merged[-1]
                merged[-1] = (m0, max(m1, c1), idx + [i])
            else:
                merged.append((c0, c1, [i]))
        rows.append(merged)
        row_top.append(top)
        first_fill = len(band)
        prev_bottom = pb[band, 3].max()
        row_bottom.append(prev_bottom)
    n_cols = len(seps) + 1
    header = _header_rows(rows, row_top, rules)
    texts = [" ".join(words[k].value for k in p) for p in phrases]
    header, tall = two_level_header(rows, header, texts, (pb[:, 0] + pb[:, 2]) / 2, seps, n_cols)
    spans = {cell: 2 for cell in tall}
    edges = np.r_[pb[:, 0].min(), seps, pb[:, 2].max()]
    gaps = _RuleGaps(rules, segments, row_top, row_bottom, edges)
    centred_labels(rows, header, (row_top, row_bottom), h, spans, gaps.crossed)
    section_rows(rows, header, n_cols)
    if segments is not None:
        row_spans(rows, header, n_cols, spans, gaps.open)
    return _grid(words, phrases, rows, header, spans, n_cols, rank)


@dataclass
class _RuleGaps:
    """Where rules run under columns ``c0..c1`` (x from ``edges[c0]`` to ``edges[c1 + 1]``): a rule runs
    under them when it has ink under half of that width (every rule does without ``segments``)."""

    rules: np.ndarray
    segments: Sequence[np.ndarray] | None
    row_top: list[float]
    row_bottom: list[float]
    edges: np.ndarray

    def _runs_under(self, k: int, c0: int, c1: int) -> bool:
        if self.segments is None:
            return True
        x0, x1 = float(self.edges[c0]), float(self.edges[c1 + 1])
        return _ink(self.segments[k], x0, x1) >= 0.5 * (x1 - x0)

    def crossed(self, y0: float, y1: float, c0: int, c1: int) -> bool:
        """Whether a rule between ``y0`` and ``y1`` runs under columns ``c0..c1``."""
        between = np.flatnonzero((self.rules > y0) & (self.rules < y1))
        return any(self._runs_under(k, c0, c1) for k in between)

    def open(self, r: int, c0: int, c1: int) -> bool:
        """Whether rules lie between rows ``r`` and ``r + 1`` but none runs under columns ``c0..c1``."""
        y0, y1 = self.row_bottom[r], self.row_top[r + 1]
        return bool(((self.rules > y0) & (self.rules < y1)).any()) and not self.crossed(y0, y1, c0, c1)


def _ink(segments: np.ndarray, x0: float, x1: float) -> float:
    """Length of ``[x0, x1]`` covered by the ``[K, 2]`` intervals ``segments``."""
    if len(segments) == 0:
        return 0.0
    return float(np.clip(np.minimum(segments[:, 1], x1) - np.maximum(segments[:, 0], x0), 0, None).sum())


def _header_rows(rows: list[list[tuple[int, int, list[int]]]], row_top: list[float], rules: np.ndarray) -> int:
    if len(rows) < 2:
        return 0
    inside = rules[(rules > row_top[0]) & (rules < row_top[-1])]
    if len(inside):
        n = int(np.searchsorted(row_top, inside.min()))
        if 0 < n <= len(rows) // 2:
            return n
    n = 1
    while n < len(rows) - 1 and any(c1 > c0 for c0, c1, _ in rows[n - 1]):
        n += 1
    return n


def _grid(
    words: list[Word],
    phrases: list[list[int]],
    rows: list[list[tuple[int, int, list[int]]]],
    header: int,
    spans: dict[tuple[int, int], int],
    n_cols: int,
    rank: np.ndarray,
) -> Table:
    """The cells of ``rows``; ``spans`` maps the ``(row, col)`` of cells covering rows below to their row span."""
    cells = []
    below: set[tuple[int, int]] = set()
    for r, row in enumerate(rows):
        taken = {c for rr, c in below if rr == r}
        for c0, c1, idx in row:
            ordered = sorted(idx, key=lambda i: rank[i])
            cell_words = [words[k] for i in ordered for k in phrases[i]]
            span = spans.get((r, c0), 1)
            cells.append(TableCell(r, c0, cell_words, row_span=span, col_span=c1 - c0 + 1, header=r < header))
            taken.update(range(c0, c1 + 1))
            below.update((rr, c) for rr in range(r + 1, r + span) for c in range(c0, c1 + 1))
        cells += [TableCell(r, c, [], header=r < header) for c in range(n_cols) if c not in taken]
    geometry = union_box(w.geometry for w in words)
    return Table(geometry, len(rows), n_cols, sorted(cells, key=lambda c: (c.row, c.col)), header)
