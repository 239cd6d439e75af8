"""The GPU layout of the Ray OCR engine without Ray: documents read into page rows (each holding its page
count), OCR'd by :class:`PageOCRActor` in batches of rows, gathered back into whole documents in any row
order, a damaged input reported; the pages read as the predictor reads them in one call."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
from _ocr_stages import render_page
from PIL import Image

import vision
from vision.pipelines.ocr.bulk import read_path
from vision.pipelines.ocr.ray_engine import PageOCRActor, _gather, read_rows


def _words(doc) -> list[list[str]]:
    return [[w.value for w in page.words] for page in doc.pages]


def test_page_rows_through_the_actor_come_back_as_whole_documents(tmp_path: Path) -> None:
    first, second = (Image.fromarray(render_page()[0]), Image.fromarray(np.ascontiguousarray(render_page()[0][::-1, ::-1])))
    first.save(tmp_path / "two.pdf", save_all=True, append_images=[second], resolution=150)
    first.save(tmp_path / "one.png")
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n damaged")
    items = [str(tmp_path / "two.pdf"), str(tmp_path / "bad.png"), str(tmp_path / "one.png")]

    rows = [r for i, item in enumerate(items) for r in read_rows({"doc": i, "item": pickle.dumps(item)}, read_path)]
    assert [(r["kind"], r["count"]) for r in rows] == [("page", 2), ("page", 2), ("error", 0), ("page", 1)]
    predictor = vision.ocr_predictor(device="cpu")
    actor = PageOCRActor(lambda: predictor)
    out = []
    for k in range(0, len(rows), 2):  # batches of two rows: the PDF's pages in one, the PNG with the error
        chunk = rows[k:k + 2]
        result = actor({key: np.array([r[key] for r in chunk], dtype=object) for key in chunk[0]})
        assert "page" not in result  # the pixels stay in the actor
        out.extend({key: result[key][j] for key in result} for j in range(len(chunk)))

    finished = {}
    reported = list(_gather(out[::-1], items, lambda item, doc: finished.setdefault(item, doc)))
    assert [item for item, _ in reported] == [items[2], items[1], items[0]]  # as each is complete
    assert dict(reported)[items[1]] is not None and "bad.png" in dict(reported)[items[1]]
    assert dict(reported)[items[0]] is None and dict(reported)[items[2]] is None
    want = predictor(read_path(items[0]))
    assert _words(finished[items[0]]) == _words(want) and all(_words(want))
    assert _words(finished[items[2]]) == _words(predictor(read_path(items[2])))
