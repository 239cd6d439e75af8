"""``ocr_predictor(rectify=True)`` / ``vision ocr --rectify``: the rectified page is the page, so word boxes,
``Page.dimensions``, ``Page.image`` and the exports all describe the same image."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).parent))
from _ocr_stages import InkDetector, TemplateReader, render_page  # noqa: E402
from test_rectify import _background  # noqa: E402

from vision.pipelines.ocr import ocr_predictor  # noqa: E402


def _photo(seed: int = 0) -> np.ndarray:
    """The test page (white, black words) warped in perspective onto a wood texture, 900 x 700."""
    rng = np.random.default_rng(seed)
    page, _ = render_page(size=(400, 660))
    ph, pw = page.shape[:2]
    w, h = 900, 700
    corners = np.array([[110, 150], [800, 120], [820, 560], [90, 590]], np.float32) + rng.uniform(
        -15, 15, (4, 2)
    ).astype(np.float32)
    src = np.array([[0, 0], [pw - 1, 0], [pw - 1, ph - 1], [0, ph - 1]], np.float32)
    matrix = cv2.getPerspectiveTransform(src, corners)
    warped = cv2.warpPerspective(page, matrix, (w, h), flags=cv2.INTER_LINEAR).astype(np.float64)
    inside = cv2.warpPerspective(np.ones((ph, pw), np.float32), matrix, (w, h))[..., None]
    return np.clip(inside * warped + (1 - inside) * _background(rng, w, h), 0, 255).astype(np.uint8)


def _ink_inside_words(page) -> float:
    """Share of the dark pixels of ``page.image`` (away from its border) that fall inside word boxes."""
    h, w = page.dimensions
    dark = page.image.min(axis=2) < 90
    margin_y, margin_x = int(0.04 * h), int(0.04 * w)
    inner = np.zeros_like(dark)
    inner[margin_y:-margin_y, margin_x:-margin_x] = True
    covered = np.zeros_like(dark)
    for word in page.words:
        x0, y0, x1, y1 = word.geometry
        covered[int(y0 * h) : int(np.ceil(y1 * h)) + 1, int(x0 * w) : int(np.ceil(x1 * w)) + 1] = True
    return float((dark & inner & covered).sum() / max(1, (dark & inner).sum()))


def test_rectified_pages_carry_their_own_image_and_geometry():
    photo = _photo()
    predictor = ocr_predictor(det_predictor=InkDetector(), reco_predictor=TemplateReader(), rectify=True)
    assert "rectify" in repr(predictor.pipeline)
    (page,) = predictor([photo]).pages
    assert page.image is not None and page.image.shape[:2] == page.dimensions != photo.shape[:2]
    assert len(page.words) >= 15
    assert _ink_inside_words(page) > 0.9  # the boxes sit on the text of the image they describe
    hocr = predictor([photo]).export_hocr()
    assert re.search(rf"ocr_page[^>]*bbox 0 0 {page.dimensions[1]} {page.dimensions[0]}", hocr)


def test_cli_rectify_writes_the_rectified_page(tmp_path):
    import pikepdf

    from vision.app.cli import build_parser
    from vision.app.cli import ocr as ocr_cli

    Image.fromarray(_photo()).save(tmp_path / "photo.png")
    predictor = ocr_predictor(det_predictor=InkDetector(), reco_predictor=TemplateReader(), rectify=True)
    argv = [
        "ocr",
        str(tmp_path / "photo.png"),
        "--rectify",
        "-f",
        "pdf",
        "-o",
        str(tmp_path / "o.pdf"),
        "--dpi",
        "72",
    ]
    assert ocr_cli.run(build_parser().parse_args(argv), predictor=predictor) == 0
    (page,) = predictor([_photo()]).pages
    with pikepdf.open(tmp_path / "o.pdf") as pdf:
        box = [float(v) for v in pdf.pages[0].mediabox]
        assert (round(box[2]), round(box[3])) == (
            page.dimensions[1],
            page.dimensions[0],
        )  # 72 dpi: 1 px = 1 pt
