"""DBNet builders and the detection predictor's contract (random weights: shapes, batching, errors)."""

import numpy as np
import pytest
import torch

from vision.io.page import PageImage
from vision.models import get_model, list_models
from vision.models.detection.dbnet import DBNet, DBOutput, DBProbability
from vision.predictors.detection.predictor import (
    INPUT_SHAPES,
    DetectionPredictor,
    DetectionResult,
    detection_predictor,
    fit_page,
    pick_shape,
)
from vision.ops.db_postprocess import DBOptions

DETECTION_MODELS = list_models(task="detection")


def test_registry_lists_detection_models_with_a_default():
    assert {"db_mobilenet_v3_large", "db_resnet18", "db_resnet34"} <= set(DETECTION_MODELS)
    from vision.models import default_model

    assert default_model("detection") == "db_mobilenet_v3_large"


@pytest.mark.parametrize("name", DETECTION_MODELS)
def test_forward_shapes_train_and_eval(name):
    model = get_model(name, weights=None)
    assert isinstance(model, DBNet)
    x = torch.randn(2, 3, 64, 96)
    model.train()
    out = model(x)
    assert isinstance(out, DBOutput)
    assert out.logits.shape == out.thresh.shape == (2, 1, 64, 96)
    assert 0 <= float(out.thresh.detach().min()) and float(out.thresh.detach().max()) <= 1
    model.eval()
    with torch.inference_mode():
        prob = DBProbability(model)(x)
    assert prob.shape == (2, 1, 64, 96) and prob.dtype == torch.float32


def test_config_is_frozen_and_overridable():
    model = get_model("db_mobilenet_v3_large", weights=None, neck_channels=64, head_channels=16)
    assert model.config.neck_channels == 64
    with pytest.raises(Exception):
        model.config.neck_channels = 8  # type: ignore[misc]


@pytest.mark.parametrize(
    "hw,expected",
    [
        ((1000, 762), (1024, 768)),
        ((1471, 750), (1024, 512)),
        ((800, 800), (1024, 1024)),
        ((700, 1000), (768, 1024)),
        ((100, 1000), (512, 1024)),
    ],
)
def test_pick_shape_by_aspect_ratio(hw, expected):
    assert pick_shape(*hw) == expected


def test_fit_page_keeps_aspect_and_pads_white():
    page = np.zeros((500, 381, 3), np.uint8)
    canvas, (h, w) = fit_page(page, (1024, 768))
    assert canvas.shape == (1024, 768, 3)
    assert (h, w) == (1008, 768)
    assert canvas[:h, :w].max() == 0 and canvas[h:].min() == 255


@pytest.mark.parametrize("hw", [(500, 381), (300, 900), (1024, 768), (40, 30)])
def test_fit_into_a_used_batch_slot_equals_fit_page(hw):
    """The predictor resizes pages straight into its batch array: leftovers of an earlier page never show."""
    import cv2

    from vision.predictors.detection.predictor import _fit_into

    page = np.random.default_rng(0).integers(0, 256, (*hw, 3), dtype=np.uint8)
    canvas, (h, w) = fit_page(page, (1024, 768))
    ref = np.full((1024, 768, 3), 255, np.uint8)  # the straightforward version: white canvas, pasted page
    interp = cv2.INTER_AREA if h < hw[0] else cv2.INTER_LINEAR
    ref[:h, :w] = page if (h, w) == hw else cv2.resize(page, (w, h), interpolation=interp)
    slot = np.random.default_rng(1).integers(0, 256, (1024, 768, 3), dtype=np.uint8)
    assert _fit_into(page, slot) == (h, w)
    np.testing.assert_array_equal(canvas, ref)
    np.testing.assert_array_equal(slot, ref)


@pytest.fixture(scope="module")
def small_predictor():
    model = get_model("db_mobilenet_v3_large", weights=None).eval()
    prob = DBProbability(model)
    return DetectionPredictor(
        prob,
        mean=model.config.mean,
        std=model.config.std,
        device=torch.device("cpu"),
        batch_size=2,
        params=DBOptions(),
        shapes=((128, 128), (128, 96), (96, 128)),
    )


def test_predictor_returns_one_result_per_page_in_order(small_predictor):
    rng = np.random.default_rng(0)
    pages = [rng.integers(0, 255, (h, w, 3), dtype=np.uint8) for h, w in [(200, 150), (50, 70), (300, 300)]]
    pages.append(PageImage(image=pages[0], source="<array>", index=0, original_size=(200, 150)))
    results = small_predictor(pages)
    assert len(results) == 4
    for r in results:
        assert isinstance(r, DetectionResult)
        n = len(r)
        assert r.boxes.shape == (n, 4) and r.boxes.dtype == np.float32
        assert r.scores.shape == (n,) and r.polygons.shape == (n, 4, 2)
        assert np.all((r.boxes >= 0) & (r.boxes <= 1))
    np.testing.assert_array_equal(results[0].boxes, results[3].boxes)


def test_grayscale_pages_are_accepted(small_predictor):
    gray = np.full((64, 64), 255, np.uint8)
    assert len(small_predictor([gray])) == 1


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros((10, 10, 3), np.float32),
        np.zeros((10, 10, 4), np.uint8),
        "page",
        np.zeros((0, 10, 3), np.uint8),
    ],
)
def test_bad_pages_raise_value_error(small_predictor, bad):
    with pytest.raises(ValueError):
        small_predictor([bad])


def test_detection_predictor_factory_random_weights():
    pred = detection_predictor(weights=None, device="cpu", batch_size=1, assume_straight_pages=False)
    assert pred.device.type == "cpu" and not pred.straight and pred.shapes == INPUT_SHAPES
    with pytest.raises(ValueError):
        detection_predictor("not_a_model", weights=None)


def test_device_resize_reads_pages_as_the_host_resize_does(small_predictor):
    """``resize="device"`` (opt-in, for GPU runs) fits pages with OpenCV's weights: same canvases within one grey
    level, so the same words come out (run here on the CPU device; the shipped weights, a rendered page)."""
    from pathlib import Path

    from PIL import Image

    import vision.assets

    page = np.asarray(Image.open(Path(vision.assets.__file__).with_name("sample_page.png")).convert("RGB"))
    host = detection_predictor(device="cpu", onnx=False, resize="host")
    device = detection_predictor(device="cpu", onnx=False, resize="device")
    small = np.ascontiguousarray(page[::3, ::3])  # enlarged, not shrunk, to fit the canvas
    for image, zoom in ((page, 1.0), (small, 1.0), (page, 0.5)):  # zoom: the text_scale stage's second pass
        shape = pick_shape(*image.shape[:2])
        (a, size_a), (b, size_b) = host._fit([image], shape, [zoom]), device._fit([image], shape, [zoom])
        assert size_a == size_b
        assert np.abs(a.astype(np.int16) - b.numpy()).max() <= 1
    for zoom in (1.0, 0.6):
        ref, out = host([page], [zoom])[0], device([page], [zoom])[0]
        assert len(ref) > 100 and len(out) == len(ref)
        np.testing.assert_allclose(out.boxes, ref.boxes, atol=2e-3)
    with pytest.raises(ValueError):
        detection_predictor(weights=None, device="cpu", resize="gpu")


def test_pages_already_on_the_device_read_as_host_arrays():
    """The OCR pipeline hands the detector pages it uploaded once (shared with the crop cutter): a uint8
    ``[H, W, 3]`` tensor gives the boxes of the same page as an array, with either resize."""
    from pathlib import Path

    from PIL import Image

    import vision.assets

    page = np.array(Image.open(Path(vision.assets.__file__).with_name("sample_page.png")).convert("RGB"))
    for resize in ("host", "device"):
        predictor = detection_predictor(device="cpu", onnx=False, resize=resize)
        ref, out = predictor([page])[0], predictor([torch.from_numpy(page)])[0]
        assert len(ref) > 100
        np.testing.assert_array_equal(out.boxes, ref.boxes)
        np.testing.assert_array_equal(out.scores, ref.scores)
        with pytest.raises(ValueError, match="uint8"):
            predictor([torch.from_numpy(page).float()])
