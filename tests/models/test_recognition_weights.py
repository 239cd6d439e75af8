"""Shipped recognition weights: the registry record matches the file and the rebuilt model."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vision.models import get_entry, get_model, list_models

SHIPPED = [n for n in list_models("recognition") if get_entry(n).weights is not None]
CARD = Path(__file__).resolve().parents[2] / "docs" / "models" / "recognition.md"


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


def test_half_precision_files_load_as_float32(tmp_path) -> None:
    """Weights ship in fp16 to halve the package; ``load_weights`` upcasts them, so a model built from an
    fp16 file is the fp32 model with its weights rounded to fp16 (same outputs within fp16 rounding)."""
    import torch
    from safetensors.torch import save_file

    from vision.models._registry import load_weights

    torch.manual_seed(0)
    model = get_model("crnn_mobilenet_small", weights=None).eval()
    state = model.state_dict()
    save_file({k: v.half() if v.is_floating_point() else v for k, v in state.items()}, str(tmp_path / "w.safetensors"))
    loaded = load_weights(tmp_path / "w.safetensors")
    assert {str(v.dtype) for v in loaded.values()} <= {"torch.float32", "torch.int64"}
    for k, v in state.items():
        torch.testing.assert_close(loaded[k], v.half().to(v.dtype) if v.is_floating_point() else v, rtol=0, atol=0)
    half = get_model("crnn_mobilenet_small", weights=tmp_path / "w.safetensors")
    assert all(p.dtype == torch.float32 for p in half.parameters())
    x = torch.rand(4, 3, 32, 96)
    with torch.no_grad():
        torch.testing.assert_close(half(x), model(x), rtol=0.02, atol=0.02)


@pytest.mark.parametrize("name", SHIPPED)
def test_model_card_states_the_meta_figures(name: str) -> None:
    """The model card names the shipped file's sha256 and every score of its meta (as percentages, 2 decimals)."""
    card = CARD.read_text(encoding="utf-8")
    weights = get_entry(name).weights
    assert weights.sha256 in card
    missing = [f"{key}.{field}" for key, m in weights.meta["metrics"].items()
               for field in ("word_accuracy", "cer", "page_cer") if field in m
               and f"{100 * m[field]:.2f}%" not in card]
    assert missing == []

