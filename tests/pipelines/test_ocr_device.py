"""Crops cut and read on the recognizer's device match the host path (run here on the CPU)."""

import cv2
import numpy as np
import pytest
import torch
from _ocr_stages import InkDetector, render_page

from vision.io.page import PageImage
from vision.ops.crops import box_crops
from vision.pipelines.base import PageState
from vision.pipelines.ocr.device import device_batches
from vision.pipelines.ocr.predictor import DetectStage, OCRPredictor, ocr_predictor
from vision.predictors.recognition.predictor import recognition_predictor
from vision.predictors.recognition.preprocess import batch_crops, resize_to_height


@pytest.fixture(scope="module")
def recognizer():
    torch.manual_seed(0)
    return recognition_predictor(weights=None, device="cpu", batch_size=16)


@pytest.mark.parametrize("straight", [True, False])
def test_device_crops_match_host_preprocessing(straight):
    image, _ = render_page(angle=0.0 if straight else 7.0)
    det = InkDetector(straight=straight)([image])[0]
    state = PageState(
        PageImage(image, "p", 0, image.shape[:2]), image, boxes=det.boxes, polygons=det.polygons
    )
    batches = device_batches(
        [state], {0: np.arange(len(det.boxes))}, straight=straight, device=torch.device("cpu")
    )
    seen = 0
    for bucket, (crops, keys, widths) in batches.items():
        assert crops.shape[1:] == (3, 32, bucket) and len(keys) == len(widths) == crops.shape[0]
        for j, (_, k) in enumerate(keys):
            if straight:  # the host path: a view of the page, resized by the recognizer
                resized = resize_to_height(box_crops(image, det.boxes[k : k + 1])[0])
                assert abs(resized.shape[1] - widths[j]) <= 1
            else:  # one perspective warp straight to 32 x width (OpenCV puts pixel i at i, we at i + 0.5)
                quad = det.polygons[k].astype(np.float64) * image.shape[1::-1] - 0.5
                rect = np.array([[0, 0], [widths[j], 0], [widths[j], 32], [0, 32]], np.float32) - 0.5
                matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), rect)
                resized = cv2.warpPerspective(
                    image, matrix, (int(widths[j]), 32), borderMode=cv2.BORDER_REPLICATE
                )
            ref = batch_crops([resized], bucket)[0].float()
            w = min(resized.shape[1], int(widths[j]))
            assert (crops[j, :, :, :w] - ref[:, :, :w]).abs().mean() < 4  # of 255 grey levels
            if widths[j] < bucket:  # paper colour padding
                assert (crops[j, :, :, widths[j] :] - ref[:, :, widths[j] :]).abs().max() <= 2
            seen += 1
    assert seen == len(det.boxes) == 21


def test_pipeline_reads_the_same_on_device_and_host(recognizer):
    image, _ = render_page()
    host = ocr_predictor(det_predictor=InkDetector(), reco_predictor=recognizer)
    device = ocr_predictor(det_predictor=InkDetector(), reco_predictor=recognizer, crops_on_device=True)
    assert device.pipeline.names == ["read", "text_layer", "polarity", "detect", "photo", "recognize", "show_through", "sparse", "script", "layout", "structure"]
    a, b = host([image]), device([image])
    assert [(w.value, w.geometry) for w in a.words()] == [(w.value, w.geometry) for w in b.words()]
    conf_a = np.array([w.confidence for w in a.words()])
    np.testing.assert_allclose([w.confidence for w in b.words()], conf_a, atol=0.05)


def test_wide_and_tall_crops_go_through_the_predictor(recognizer):
    from vision.pipelines.ocr.device import DeviceRecognizeStage

    image = np.full((400, 1200, 3), 255, np.uint8)
    boxes = np.array(
        [
            [0.01, 0.1, 0.95, 0.15],  # 1128 x 20 px: wider than max_width once resized
            [0.5, 0.3, 0.52, 0.9],  # 24 x 240 px: tall
            [0.1, 0.5, 0.2, 0.56],
        ],
        np.float32,
    )  # an ordinary word
    state = PageState(
        PageImage(image, "p", 0, image.shape[:2]),
        image,
        boxes=boxes,
        polygons=np.stack([boxes[:, [0, 1]], boxes[:, [2, 1]], boxes[:, [2, 3]], boxes[:, [0, 3]]], 1),
    )
    calls = []

    class Spy:  # the real predictor, recording what it is asked to read
        def __getattr__(self, name):
            return getattr(recognizer, name)

        def __call__(self, crops):
            calls.append([c.shape for c in crops])
            return recognizer(crops)

    DeviceRecognizeStage(Spy())([state])
    (shapes,) = calls  # one call, with the wide crop (about 20 x 1128 px) and the tall one (240 x 24 px)
    assert [(h > 200, w > 1000) for h, w, _ in shapes] == [(False, True), (True, False)]
    assert len(state.texts) == 3 and all(isinstance(t, str) for t, _ in state.texts)
    with pytest.raises(ValueError):
        ocr_predictor(det_predictor=InkDetector(), reco_predictor=lambda c: [], crops_on_device=True)


@pytest.mark.parametrize("group_values", [1 << 26, 1])  # pages cut together, or each in its own group
def test_device_batches_of_mixed_page_sizes_keep_the_order_and_pixels(monkeypatch, group_values):
    monkeypatch.setattr("vision.pipelines.ocr.device._GROUP_VALUES", group_values)
    images = [render_page()[0], render_page(angle=0.0)[0][:300], render_page()[0]]
    states = []
    for image in images:
        det = InkDetector()([image])[0]
        states.append(PageState(PageImage(image, "p", 0, image.shape[:2]), image,
                                boxes=det.boxes, polygons=det.polygons))
    todo = {i: np.arange(len(s.boxes))[::-1][:: i + 1] for i, s in enumerate(states)}  # uneven word picks
    together = device_batches(states, todo, straight=True, device=torch.device("cpu"))
    for bucket, (crops, keys, widths) in together.items():
        assert [si for si, _ in keys] == sorted(si for si, _ in keys)
        for si in range(3):  # the same crops as cutting each page alone
            alone = device_batches([states[si]], {0: todo[si]}, straight=True, device=torch.device("cpu"))
            rows = [j for j, (s, _) in enumerate(keys) if s == si]
            if bucket not in alone:
                assert not rows
                continue
            ref, ref_keys, ref_widths = alone[bucket]
            assert [k for _, k in ref_keys] == [keys[j][1] for j in rows]
            torch.testing.assert_close(crops[rows], ref, rtol=0, atol=0)
            np.testing.assert_array_equal(widths[rows], ref_widths)


def test_detector_and_crop_cutter_share_one_upload_per_page(recognizer, monkeypatch):
    """With a detector that fits pages on the recognizer's device, each page crosses to the device once
    (kept on the state for the crop cutter, dropped after recognition) and the words are those of the
    pipeline that uploads twice."""
    from vision.pipelines.ocr import device as device_mod
    from vision.predictors.detection.predictor import detection_predictor

    uploads = []
    upload = device_mod.to_device
    monkeypatch.setattr(device_mod, "to_device", lambda im, dev: uploads.append(im) or upload(im, dev))
    det = detection_predictor(device="cpu", onnx=False, resize="device")
    pages = [render_page()[0], render_page(angle=0.0)[0]]
    shared = ocr_predictor(det_predictor=det, reco_predictor=recognizer, crops_on_device=True)
    assert shared.pipeline["detect"].device == torch.device("cpu")
    twice = OCRPredictor(shared.pipeline.replace("detect", DetectStage(det)), shared.options)
    a = shared(pages)
    assert len(uploads) == 2 and all(u is p for u, p in zip(uploads, pages))
    b = twice(pages)
    assert len(uploads) == 4
    assert len(list(a.words())) > 10
    assert [(w.value, w.geometry, w.confidence) for w in a.words()] == [
        (w.value, w.geometry, w.confidence) for w in b.words()
    ]


def test_device_page_is_uploaded_again_once_a_stage_replaces_the_image():
    from vision.pipelines.ocr.device import device_page

    image = np.zeros((5, 7, 3), np.uint8)
    state = PageState(PageImage(image, "p", 0, image.shape[:2]), image)
    first = device_page(state, torch.device("cpu"))
    assert device_page(state, torch.device("cpu")) is first
    state.image = np.rot90(image).copy()  # as the orientation and deskew stages do
    turned = device_page(state, torch.device("cpu"))
    assert turned is not first and tuple(turned.shape) == (7, 5, 3)
