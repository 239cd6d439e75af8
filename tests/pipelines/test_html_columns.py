"""Reading order on article pages drawn by headless Chromium: justified narrow columns (rivers of wide
spaces), figures beside gutters, display formulas with equation numbers."""

import shutil

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from vision.pipelines.ocr.reading_order import build_blocks, find_regions
from vision.structures import Word
from vision.training.synth.html_pages import CHROMIUM, random_article, render_pages


@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="needs Chromium")
def test_three_and_two_column_pages_read_column_by_column():
    # two pages that gutters over 3 lines, without figures as obstacles, read at CER 0.32 and 0.51
    pages = render_pages([random_article(np.random.default_rng(15), 3), random_article(np.random.default_rng(30), 2)], [3, 2])
    for page in pages:
        h, w = page.image.shape[:2]
        boxes = np.array([b for _, b, _ in page.words], dtype=np.float64)
        words = [Word(t, 1.0, (b[0] / w, b[1] / h, b[2] / w, b[3] / h)) for t, b, _ in page.words]
        regions = find_regions(page.image, boxes / [w, h, w, h])
        obstacles = np.array([r.geometry for r in regions], dtype=np.float64).reshape(-1, 4) * [w, h, w, h]
        blocks = build_blocks(words, boxes, obstacles=obstacles)
        pred = " ".join(wd.value for b in blocks for ln in b.lines for wd in ln.words)
        truth = " ".join(t for t, _, _ in page.words)
        assert Levenshtein.distance(pred, truth) / len(truth) < 0.05, page.columns
