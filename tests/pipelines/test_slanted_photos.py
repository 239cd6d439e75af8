"""The OCR pipeline reads unsure words of photos again sheared (``tilt.py``), and only of photos, on the host and
on the recognizer's device alike."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from _ocr_stages import InkDetector, render_page

from vision.pipelines.ocr.predictor import ocr_predictor
from vision.predictors.recognition.predictor import recognition_predictor


def spy(predictor, calls: list[int]):
    """A copy of the real recognizer that records how many crops it is asked to read again sheared."""
    copied = copy.copy(predictor)

    def reread_slanted(crops, results):
        calls.append(len(crops))
        return predictor.reread_slanted(crops, results)

    copied.reread_slanted = reread_slanted
    return copied


@pytest.fixture(scope="module")
def recognizer():
    torch.manual_seed(0)
    return recognition_predictor(weights=None, device="cpu", batch_size=16, slanted=False)


@pytest.mark.parametrize("on_device", [False, True])
def test_only_photos_are_read_again(recognizer, on_device):
    image, _ = render_page(angle=12.0)  # words at a slant in straight boxes; random weights: all unsure
    words = {}
    for mode in ("on", "off"):
        calls: list[int] = []
        predictor = ocr_predictor(det_predictor=InkDetector(), reco_predictor=spy(recognizer, calls), photo=mode,
                                  crops_on_device=on_device)
        doc = predictor([image])
        words[mode] = [(w.value, w.geometry) for w in doc.words()]
        if mode == "on":
            assert len(calls) == 1 and calls[0] > 0
        else:
            assert calls == []
            plain = ocr_predictor(det_predictor=InkDetector(), reco_predictor=recognizer, photo="off",
                                  crops_on_device=on_device)([image])
            assert words["off"] == [(w.value, w.geometry) for w in plain.words()]


def test_host_and_device_paths_agree_on_photos():
    shipped = recognition_predictor(device="cpu", slanted=False)
    image, _ = render_page(angle=12.0)
    read = [list(ocr_predictor(det_predictor=InkDetector(), reco_predictor=shipped, photo="on",
                               crops_on_device=on_device)([image]).words()) for on_device in (False, True)]
    assert len(read[0]) == len(read[1]) > 10
    same = np.mean([a.value == b.value for a, b in zip(*read)])
    assert same >= 0.9, same  # device crops differ from host crops by a grey level or so
