"""The shipped detection weights: registry records checked against the files, and a semantic check."""

import hashlib

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from vision.models import get_entry, get_model, list_models
from vision.predictors.detection.predictor import detection_predictor
from vision.ops.boxes import box_iou
from vision.ops.db_postprocess import DBOptions

SHIPPED = [n for n in list_models(task="detection") if get_entry(n).weights is not None]


def test_the_default_detector_ships_weights():
    assert "db_mobilenet_v3_large" in SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_weights_record_matches_file_and_model(name):
    w = get_entry(name).weights
    data = w.path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == w.sha256
    assert len(data) == w.meta["file_bytes"] < 30 * 1024**2
    model = get_model(name)  # loads strictly through the registry (checksum verified)
    assert sum(p.numel() for p in model.parameters()) == w.meta["num_params"]
    assert {"recipe", "data", "metrics", "postprocess", "input_shapes"} <= set(w.meta)
    DBOptions(**w.meta["postprocess"])  # the recorded settings are valid post-processing fields
    assert w.meta["recipe"]["config"].startswith("configs/")  # checked in tests/training/test_configs.py
    for score in w.meta["metrics"].values():
        assert all(0 <= v <= 1 for v in (score.values() if isinstance(score, dict) else [score]))


@pytest.mark.parametrize("name", SHIPPED)
def test_predictor_uses_the_recorded_shapes_and_post_processing(name):
    """Shipped weights bring their own input shapes and post-processing; arguments and other files do not."""
    meta = get_entry(name).weights.meta
    p = detection_predictor(name, device="cpu", onnx=False)
    assert p.shapes == tuple(tuple(s) for s in meta["input_shapes"])
    assert p.params == DBOptions(**meta["postprocess"])
    mine = detection_predictor(name, device="cpu", onnx=False, shapes=[(512, 512)], params=DBOptions())
    assert mine.shapes == ((512, 512),) and mine.params == DBOptions()
    assert detection_predictor(name, weights=None, device="cpu", onnx=False).params == DBOptions()


def test_shipped_detector_finds_printed_words():
    """Semantic check: a clean rendered line of words comes back as one box per word."""
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 28)
    page = Image.new("RGB", (900, 300), "white")
    draw = ImageDraw.Draw(page)
    words, x, truth = ["Invoice", "number", "12345", "dated", "2024-05-01"], 40, []
    for w in words:
        draw.text((x, 130), w, font=font, fill="black", anchor="ls")
        x0, y0, x1, y1 = draw.textbbox((x, 130), w, font=font, anchor="ls")
        truth.append([x0, y0, x1, y1])
        x = x1 + font.getlength(" ")
    result = detection_predictor(device="cpu")([np.asarray(page)])[0]
    assert len(result) == len(words)
    pred = result.boxes * np.array([900, 300, 900, 300])
    assert box_iou(np.asarray(truth, float), pred).max(axis=1).min() > 0.5
    assert result.scores.min() > 0.5


@pytest.mark.parametrize(
    "name, card", [("db_mobilenet_v3_large", "detection.md"), ("db_mobilenet_v3_large_photo", "detection_photo.md")]
)
def test_model_card_states_every_recorded_score(name, card):
    """Each shipped detector's card (docs/models/) shows each score of its meta (3 decimals, or a percentage)."""
    from pathlib import Path

    card = (Path(__file__).resolve().parents[2] / "docs" / "models" / card).read_text()
    meta = get_entry(name).weights.meta["metrics"]
    assert meta
    for name, scores in meta.items():
        for key, v in scores.items():
            shown = {f"{x:.3f}" for x in (v - 5e-4, v, v + 5e-4)} | {f"{100 * v:.1f}%"}
            assert any(s in card for s in shown), (name, key, v)
