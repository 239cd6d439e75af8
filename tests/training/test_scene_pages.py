"""Scene pages for the detector (vision.training.synth.scene_pages): determinism, labels, ignore masks, the
layer warps they are built with, the detection stream's scene share (fonts: DejaVu; photos: synthetic)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.training.losses.db import THRESH_MIN, db_targets
from vision.training.synth.fonts import discover_fonts
from vision.training.synth.pages import PageRenderer
from vision.training.synth.photos import PhotoBank
from vision.training.synth.scene_objects import OBJECT_KINDS, text_object
from vision.training.synth.scene_pages import SCENE_KINDS, SceneRenderer
from vision.training.synth.scene_warp import Canvas, Layer, bend, place, similarity

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
WORDS = ["OPEN", "Exit", "station", "12.50", "CAFE", "Main", "St.", "SALE", "apple", "Platform"]


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> PhotoBank:
    folder = tmp_path_factory.mktemp("photos")
    rng = np.random.default_rng(0)
    for i in range(3):
        img = cv2.resize(rng.integers(0, 255, (6, 9, 3), dtype=np.uint8), (480, 320), interpolation=cv2.INTER_CUBIC)
        cv2.imwrite(str(folder / f"p{i}.jpg"), img)
    (folder / "holdout").mkdir()
    cv2.imwrite(str(folder / "holdout/never.jpg"), np.zeros((320, 480, 3), np.uint8))
    bank = PhotoBank(folder)
    assert len(bank) == 3  # holdout/ is never read
    return bank


@pytest.fixture(scope="module")
def scenes(photos: PhotoBank) -> SceneRenderer:
    fonts = discover_fonts([DEJAVU], include_system=False)
    assert fonts, "fonts-dejavu-core is required (make setup installs it)"
    renderer = PageRenderer(fonts, lambda rng: WORDS[int(rng.integers(len(WORDS)))])
    return SceneRenderer(renderer, photos, long_side=512)


@pytest.mark.parametrize("kind", list(SCENE_KINDS))
def test_pages_are_deterministic_from_a_seed(scenes: SceneRenderer, kind: str) -> None:
    a, b = scenes(np.random.default_rng(7), kind), scenes(np.random.default_rng(7), kind)
    assert a.kind == b.kind == kind
    assert np.array_equal(a.image, b.image) and np.array_equal(a.quads, b.quads)
    for k in ("gt", "mask", "thresh", "thresh_mask"):
        assert np.array_equal(a.targets[k], b.targets[k])
    c = scenes(np.random.default_rng(8), kind)
    assert c.image.shape != a.image.shape or not np.array_equal(c.image, a.image)


@pytest.mark.parametrize("kind", list(SCENE_KINDS))
def test_labels_are_sane(scenes: SceneRenderer, kind: str) -> None:
    for seed in range(3):
        page = scenes(np.random.default_rng(seed), kind)
        h, w = page.image.shape[:2]
        assert page.image.dtype == np.uint8 and page.image.shape[2] == 3
        t = page.targets
        for k in ("gt", "mask", "thresh", "thresh_mask"):
            assert t[k].shape == (h, w) and t[k].dtype == np.uint8
        assert set(np.unique(t["gt"])) <= {0, 1} and set(np.unique(t["mask"])) <= {0, 1}
        assert t["thresh"].min() >= round(THRESH_MIN * 255) - 1
        if kind == "empty":
            assert t["gt"].sum() == 0 and len(page.quads) == 0
            continue
        assert page.quads.shape[1:] == (4, 2)
        # every kernel pixel lies inside a (slightly grown) reported word quad, and quads have kernels
        inside = np.zeros((h, w), np.uint8)
        for q in page.quads:
            c = q.mean(0)
            cv2.fillPoly(inside, [np.round(c + (q - c) * 1.3 + np.sign(q - c) * 3).astype(np.int32)], 1)
        if kind != "document":  # page curl moves words further than the quads (the maps follow exactly)
            assert (t["gt"] & (1 - inside)).sum() <= 0.02 * max(int(t["gt"].sum()), 1)
        assert t["gt"].sum() > 0 or len(page.quads) == 0


def test_words_too_small_become_ignore_regions(scenes: SceneRenderer, photos: PhotoBank) -> None:
    rng = np.random.default_rng(3)
    layer = text_object("label", scenes.renderer, photos, rng, 24, scale=0.15)  # 24 px -> ~3 px tall
    assert len(layer.boxes) == 0 and len(layer.ignore) > 0
    assert layer.maps["gt"].sum() == 0
    for x0, y0, x1, y1 in layer.ignore.astype(int):
        assert layer.maps["mask"][y0 + 1:y1 - 1, x0 + 1:x1 - 1].max() == 0
    big = text_object("sign", scenes.renderer, photos, np.random.default_rng(3), 40, scale=1.0)
    assert len(big.boxes) > 0 and big.maps["gt"].sum() > 0


@pytest.mark.parametrize("kind", OBJECT_KINDS)
def test_every_object_kind_draws_labelled_words(scenes: SceneRenderer, photos: PhotoBank, kind: str) -> None:
    layer = text_object(kind, scenes.renderer, photos, np.random.default_rng(11), 32, scale=1.0)
    assert len(layer.boxes) + len(layer.ignore) > 0
    assert layer.rgb.shape[:2] == layer.alpha.shape == layer.maps["gt"].shape


def test_place_rotates_kernels_with_the_image() -> None:
    """A 90-degree turn makes a wide word's kernel tall; overlapping placements are refused."""
    h, w = 40, 200
    box = np.float32([[20, 10, 180, 30]])
    layer = Layer(np.full((h, w, 3), 255, np.float32), np.ones((h, w), np.float32),
                  db_targets(h, w, box), box, np.zeros((0, 4), np.float32))
    canvas = Canvas.empty(np.zeros((300, 300, 3), np.uint8))
    assert place(canvas, layer, similarity(90, 1.0, w / 2, h / 2, 150, 150))
    ys, xs = np.nonzero(canvas.maps["gt"])
    assert np.ptp(ys) > 3 * np.ptp(xs)
    assert not place(canvas, layer, similarity(90, 1.0, w / 2, h / 2, 152, 150))
    assert canvas.quads[0].shape == (4, 2)
    bent = bend(layer, 0.4)
    assert bent.alpha.shape[0] > h and bent.maps["gt"].sum() > 0.8 * layer.maps["gt"].sum()


def _scene_data(tmp_path: Path, **fields: object):
    """A detection DataConfig over one random photo, DejaVu and :data:`WORDS` (in ``tmp_path``)."""
    from vision.training.detection_data import DataConfig

    folder = tmp_path / "photos"
    folder.mkdir()
    cv2.imwrite(str(folder / "a.jpg"), np.random.default_rng(0).integers(0, 255, (200, 300, 3), dtype=np.uint8))
    words = tmp_path / "words"
    words.mkdir()
    (words / "english").write_text("\n".join(WORDS))
    return DataConfig(fonts_dir=str(DEJAVU), dict_dir=str(words), photos_dir=str(folder), **fields)


def test_detection_stream_draws_scene_pages(tmp_path: Path) -> None:
    from vision.training.detection_data import DetectionStream

    cfg = _scene_data(tmp_path, scene_share=1.0, crop=128, crops_per_page=2, long_side=384)
    a = [c for _, c in zip(range(4), DetectionStream(cfg, seed=1))]
    b = [c for _, c in zip(range(4), DetectionStream(dataclasses.replace(cfg), seed=1))]
    assert all(np.array_equal(x["image"], y["image"]) and np.array_equal(x["gt"], y["gt"]) for x, y in zip(a, b))
    assert a[0]["image"].shape == (128, 128, 3) and a[0]["gt"].shape == (128, 128)


def test_scene_calibration_scores_held_out_photos(tmp_path: Path) -> None:
    """calibrate_scenes: held-out synthetic photos, boxes around their quads, the grid swept and the best kept."""
    import torch

    from vision.models import get_model
    from vision.training.detection_data import scene_validation_pages
    from vision.training.detection_eval import calibrate_scenes

    cfg = _scene_data(tmp_path, long_side=256)
    pages = scene_validation_pages(cfg, pages=3, seed=5)
    again = scene_validation_pages(cfg, pages=3, seed=5)
    assert len(pages) == 3 and all(np.array_equal(a[0], b[0]) for a, b in zip(pages, again))
    for _, boxes, ignore in pages:
        for b in (boxes, ignore):
            assert b.shape[1:] == (4,) and np.all(b[:, 2:] >= b[:, :2])
    assert sum(len(b) for _, b, _ in pages) > 0
    torch.manual_seed(0)
    model = get_model("db_mobilenet_v3_large", weights=None).eval()
    report = calibrate_scenes(model, cfg, torch.device("cpu"), pages=2, seed=5, bin_thresh=(0.3,),
                              box_thresh=(0.5,), unclip=(0.4, 0.6), pad=(0, 2), budget_s=120)
    assert report["pages"] == 2 and len(report["sweep"]) == 3
    assert report["best"] in report["sweep"]
    assert report["best"]["f1"] == max(r["f1"] for r in report["sweep"])


def test_large_words_share_draws_near_signs(scenes: SceneRenderer, photos: PhotoBank) -> None:
    from vision.training.synth.scene_pages import _word_height

    heights = [_word_height(np.random.default_rng(i), large=1.0) for i in range(50)]
    assert all(90 <= h <= 240 for h in heights)
    usual = [_word_height(np.random.default_rng(i)) for i in range(200)]
    assert all(7 <= h <= 90 for h in usual)
    assert usual == [_word_height(np.random.default_rng(i), large=0.0) for i in range(200)]  # seeds keep pages
    large = SceneRenderer(scenes.renderer, photos, long_side=1024, large_words=1.0)
    page = large(np.random.default_rng(5), "scene")
    sides = np.linalg.norm(page.quads[:, 3] - page.quads[:, 0], axis=1)
    assert len(sides) and np.median(sides) > 60  # near signs: tall words (perspective and cuts aside)
