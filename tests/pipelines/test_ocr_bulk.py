"""``OCRPredictor.map``: the bulk engine gives what one call per document gives, in input order, with failed
documents reported in their place; host work in worker processes (read, post stages, finish)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from _ocr_stages import InkDetector, render_page
from PIL import Image

import vision
from vision.errors import UnreadableFile
from vision.io.page import PageImage
from vision.structures import Document


@pytest.fixture(scope="module")
def predictor():
    torch.manual_seed(0)
    return vision.ocr_predictor(det_predictor=InkDetector(), reco_weights=None, device="cpu", pages_per_batch=3,
                                reco_batch_size=64)


@pytest.fixture(scope="module")
def pages():
    return [render_page(top=30 + 7 * i, left=20 + 11 * i, font_size=18 + 2 * i)[0] for i in range(4)]


def _text(doc: Document) -> list[list[tuple[str, tuple]]]:
    return [[(w.value, tuple(round(v, 5) for v in w.geometry)) for w in p.words] for p in doc.pages]


def write_text(item, doc: Document) -> str:  # a finish function: module level, so workers can import it
    out = Path(str(item) + ".txt")
    out.write_text(doc.render())
    return out.name


def test_map_matches_one_call_per_document(predictor, pages) -> None:
    inputs = [pages[0], [pages[1], pages[2]], PageImage(pages[3], "p3.png", 0, pages[3].shape[:2]), []]
    got = list(predictor.map(inputs, ahead=2))
    assert len(got) == 4 and all(isinstance(d, Document) for d in got)
    for item, doc in zip(inputs[:3], got):
        assert _text(doc) == _text(predictor(item))
    assert got[2].source == "p3.png" and got[3].pages == []


def test_map_over_files_in_worker_processes(predictor, pages, tmp_path) -> None:
    paths = []
    for i, page in enumerate(pages[:3]):
        paths.append(tmp_path / f"page{i}.png")
        Image.fromarray(page).save(paths[-1])
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    inputs = [paths[0], bad, paths[1], paths[2]]
    got = list(predictor.map(inputs, workers=1, finish=write_text, errors="return"))
    assert got[0] == "page0.png.txt" and got[2] == "page1.png.txt" and got[3] == "page2.png.txt"
    assert isinstance(got[1], Exception)
    for path in paths:
        expected = predictor(np.asarray(Image.open(path).convert("RGB"))).render()
        assert Path(str(path) + ".txt").read_text() == expected
    with pytest.raises(Exception):
        list(predictor.map([bad]))


def test_map_reads_uris(predictor, pages, tmp_path) -> None:
    """A URI input (here ``file://``; object stores go through the same pyarrow filesystems) reads as its
    path."""
    path = tmp_path / "in dir" / "page 0.png"
    path.parent.mkdir()
    Image.fromarray(pages[0]).save(path)
    missing = f"{tmp_path.as_uri()}/gone.png"
    by_uri, by_path, gone = predictor.map([path.as_uri(), str(path), missing], errors="return")
    assert _text(by_uri) == _text(by_path) and by_uri.source == path.as_uri()
    assert isinstance(gone, UnreadableFile) and "gone.png" in str(gone)
