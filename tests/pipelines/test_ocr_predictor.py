"""``vision.ocr_predictor`` with the real detection and recognition predictors (random weights: the tests do
not depend on what the models read, only on what the pipeline does with it)."""

import numpy as np
import torch
from _ocr_stages import InkDetector, render_page

import vision
from vision.io.page import PageImage
from vision.structures import Document


def test_random_models_end_to_end():
    torch.manual_seed(0)
    predictor = vision.ocr_predictor(det_weights=None, reco_weights=None, device="cpu", det_batch_size=2)
    assert predictor.pipeline.names == ["read", "text_layer", "polarity", "detect", "text_scale", "photo", "crop", "recognize", "show_through", "sparse", "script", "layout", "structure"]
    image, _ = render_page()
    page = PageImage(image=image, source="scan.png", index=7, original_size=image.shape[:2])
    doc = predictor([image, page])
    assert isinstance(doc, Document) and [p.page_idx for p in doc.pages] == [0, 7]
    assert all(p.dimensions == image.shape[:2] and p.image is image for p in doc.pages)
    assert doc.pages[1].source == "scan.png"
    assert Document.from_dict(doc.export()).render() == doc.render()


def test_real_recognizer_reads_every_detected_word():
    torch.manual_seed(0)
    image, words = render_page()
    doc = vision.ocr_predictor(det_predictor=InkDetector(), reco_weights=None, device="cpu")([image])
    page = doc.pages[0]
    assert len(page.words) == len(words)  # random weights still emit text for each crop
    assert all(0.0 <= w.confidence <= 1.0 and w.value == w.value.strip() and w.value for w in page.words)
    boxes = np.array([w.geometry for w in page.words])
    assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()


def test_onnx_is_the_cpu_default_and_reads_as_fp32_eager(tmp_path, monkeypatch):
    """Shipped weights: the default CPU predictor (onnxruntime) finds and reads what fp32 eager does."""
    from vision.fast.onnx import OnnxRunner

    monkeypatch.setenv("VISION_CACHE", str(tmp_path))
    fast = vision.ocr_predictor(device="cpu")
    eager = vision.ocr_predictor(device="cpu", onnx=False)
    for stage in ("detect", "recognize"):
        assert isinstance(fast.pipeline[stage].predictor.model, OnnxRunner)
        assert isinstance(eager.pipeline[stage].predictor.model, torch.nn.Module)
    image, words = render_page()
    got, ref = fast([image]).pages[0].words, eager([image]).pages[0].words
    assert len(ref) >= len(words) - 2  # the real models find the rendered words
    assert [w.value for w in got] == [w.value for w in ref]
    np.testing.assert_allclose([w.geometry for w in got], [w.geometry for w in ref], atol=2e-3)
