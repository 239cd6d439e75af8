"""``complete_groups``: each input of a Ray pipeline handed back once, whole, whatever the row order."""

from vision.pipelines._ray_rows import complete_groups


def _rows() -> list[dict]:
    return [
        {"doc": 1, "kind": "page", "pos": 1},
        {"doc": 0, "kind": "end", "count": 2},
        {"doc": 1, "kind": "end", "count": 2},
        {"doc": 0, "kind": "page", "pos": 0},
        {"doc": 2, "kind": "page", "pos": 0},
        {"doc": 2, "kind": "error", "message": "damaged"},
        {"doc": 2, "kind": "page", "pos": 1},  # after the error: dropped
        {"doc": 1, "kind": "page", "pos": 0},
        {"doc": 3, "kind": "end", "count": 0},
        {"doc": 0, "kind": "page", "pos": 1},
        {"doc": 4, "kind": "page", "pos": 0},  # its end row never comes: never yielded
    ]


def test_groups_come_out_once_whole_or_as_their_error() -> None:
    out = list(complete_groups(_rows(), key=lambda r: r["doc"], part="page", count="count"))
    assert [k for k, _, _ in out] == [2, 1, 3, 0]
    got = {k: (None if parts is None else [r["pos"] for r in parts], end["kind"]) for k, parts, end in out}
    assert got == {2: (None, "error"), 1: ([1, 0], "end"), 3: ([], "end"), 0: ([0, 1], "end")}


def test_part_rows_may_carry_the_count_themselves() -> None:
    """The OCR engine's page rows hold their document's page count: no end row needed (one for 0 pages)."""
    rows = [
        {"doc": 0, "kind": "page", "pos": 1, "count": 3},
        {"doc": 1, "kind": "end", "count": 0},
        {"doc": 0, "kind": "page", "pos": 0, "count": 3},
        {"doc": 2, "kind": "page", "pos": 0, "count": 1},
        {"doc": 0, "kind": "page", "pos": 2, "count": 3},
        {"doc": 3, "kind": "page", "pos": 0, "count": 2},  # its second page never comes: never yielded
    ]
    out = list(complete_groups(rows, key=lambda r: r["doc"], part="page", count="count"))
    assert [(k, [r["pos"] for r in parts]) for k, parts, _ in out] == [(1, []), (2, [0]), (0, [1, 0, 2])]
