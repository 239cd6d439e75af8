"""Shipped recognition weights: the registry record matches the file and the rebuilt model."""

from __future__ import annotations

import hashlib

import pytest

from vision.models import get_entry, get_model, list_models

SHIPPED = [n for n in list_models("recognition") if get_entry(n).weights is not None]


def test_the_default_ships_weights() -> None:
    assert "crnn_mobilenet_small" in SHIPPED


def test_all_recognition_weights_fit_the_size_budget() -> None:
    total = sum(get_entry(n).weights.path.stat().st_size for n in SHIPPED)
    assert total < 20 * 1024 * 1024


@pytest.mark.parametrize("name", SHIPPED)
def test_record_matches_file_and_model(name: str) -> None:
    weights = get_entry(name).weights
    data = weights.path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == weights.sha256
    meta = weights.meta
    for key in ("num_params", "file_size", "recipe", "data", "metrics", "steps", "samples_seen"):
        assert key in meta, key
    assert meta["file_size"] == len(data)
    model = get_model(name)  # loads strictly, checking the sha256 again
    assert sum(p.numel() for p in model.parameters()) == meta["num_params"]
    assert meta["recipe"]["arch"] == name
    metrics = meta["metrics"]["words_dev"]
    assert 0.0 <= metrics["cer"] <= 1.0 and 0.0 <= metrics["word_accuracy"] <= 1.0
