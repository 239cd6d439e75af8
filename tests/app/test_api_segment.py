"""POST /v1/segment and the UI's segmentation tab, with a tiny random-weight SAM checkpoint written here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import _app_media as _media
import numpy as np
import pytest
from safetensors.torch import save_file

from vision.app.api.runtime import SamService
from vision.io import DocumentFile
from vision.predictors.segmentation.predictor import sam_predictor
from vision.models.segmentation.sam.sam import build_sam
from vision.structures import mask_from_rle


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``test`` SAM variant with random weights, saved in the official key layout."""
    import torch

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("sam") / "sam_test.safetensors"
    save_file({k: v.contiguous() for k, v in build_sam("test").state_dict().items()}, str(path))
    return path


def _segment_client(make_client: Any, checkpoint: Path, **overrides: Any) -> Any:
    return make_client(models={"sam_checkpoint": checkpoint, "sam_model_type": "test"}, **overrides)


def test_masks_equal_the_predictor_and_follow_the_prompt(make_client: Any, checkpoint: Path) -> None:
    data = _media.png(["segment me"], size=(120, 160))
    image = next(iter(DocumentFile.from_path(data))).image
    reference = SamService(sam_predictor(checkpoint, model_type="test", device="cpu"))
    direct = reference.segment(image, points=np.array([[80.0, 30.0]]), labels=np.array([1]), multimask=True)
    with _segment_client(make_client, checkpoint) as client:
        response = client.post(
            "/v1/segment",
            files={"file": ("p.png", data)},
            data={"points": "[[0.5, 0.25]]", "multimask": "true"},
        )
        assert client.get("/readyz").json()["segmentation"] is True
    assert response.status_code == 200
    body = response.json()
    assert (body["width"], body["height"], len(body["masks"])) == (160, 120, 3)
    assert [m["score"] for m in body["masks"]] == [m.score for m in direct]
    assert sorted((m["score"] for m in body["masks"]), reverse=True) == [m["score"] for m in body["masks"]]
    for got, want in zip(body["masks"], direct, strict=True):
        assert np.array_equal(mask_from_rle(got["mask"]), want.mask)


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({}, "give points, a box, or both"),
        ({"points": "[[0.5, 1.5]]"}, "points: expected 1 to 64 [x, y] pairs in [0, 1]"),
        ({"points": "not json"}, "points: not a JSON array of numbers"),
        (
            {"points": "[[0.5, 0.5]]", "labels": "[2]"},
            "labels: expected one 0 (background) or 1 (object) per point",
        ),
        ({"box": "[0.6, 0.1, 0.2, 0.9]"}, "box: expected [x0, y0, x1, y1] in [0, 1] with x0 <= x1, y0 <= y1"),
    ],
)
def test_bad_prompts(make_client: Any, checkpoint: Path, form: dict, message: str) -> None:
    with _segment_client(make_client, checkpoint) as client:
        response = client.post(
            "/v1/segment", files={"file": ("p.png", _media.png(["x"], size=(64, 64)))}, data=form
        )
    assert response.status_code == 422
    assert response.json() == {"error": "invalid_prompt", "message": message}


def test_segment_takes_images_only_and_ui_has_the_tab(make_client: Any, checkpoint: Path) -> None:
    with _segment_client(make_client, checkpoint, ui=True) as client:
        pdf = client.post(
            "/v1/segment",
            files={"file": ("d.pdf", _media.digital_pdf([["x"]]))},
            data={"box": "[0, 0, 1, 1]"},
        )
        config = client.get("/ui/config").json()
    assert pdf.status_code == 415
    assert pdf.json() == {"error": "unsupported_format", "message": "d.pdf: segmentation takes an image"}
    labels = {c.get("props", {}).get("label") for c in config["components"]}
    assert {"Segment", "Image", "Mask", "Pages with word boxes"} <= labels
    assert {d.get("api_name") for d in config["dependencies"]} >= {"ocr", "segment"}


def test_ui_click_tints_the_mask_of_the_object_under_it(checkpoint: Path) -> None:
    from vision.app.ui import MASK_COLOR, segment_at

    image = np.array(_media.page_image(["click"], size=(96, 128)))
    sam = SamService(sam_predictor(checkpoint, model_type="test", device="cpu"))
    best = sam.segment(image, points=np.array([[64.0, 40.0]]), labels=np.array([1]))[0]
    tinted = segment_at(sam, image, 64, 40)
    expected = image.copy()
    expected[best.mask] = (0.45 * image[best.mask].astype(np.float32) + 0.55 * MASK_COLOR).astype(np.uint8)
    assert np.array_equal(tinted, expected)
