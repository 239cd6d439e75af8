"""Uniform weight soups: the mean of fine-tunes, checked names and shapes, and the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from vision.models import get_model
from vision.training.soup import main, uniform_soup


def test_soup_is_the_elementwise_mean() -> None:
    a = {"w": torch.tensor([1.0, 2.0]), "n": torch.tensor(7)}
    b = {"w": torch.tensor([3.0, 6.0]), "n": torch.tensor(9)}
    soup = uniform_soup([a, b])
    torch.testing.assert_close(soup["w"], torch.tensor([2.0, 4.0]))
    assert soup["n"].item() == 7  # integer buffers come from the first state


def test_soup_rejects_different_models() -> None:
    with pytest.raises(ValueError, match="other tensors"):
        uniform_soup([{"a": torch.zeros(2)}, {"b": torch.zeros(2)}])
    with pytest.raises(ValueError, match="shape"):
        uniform_soup([{"a": torch.zeros(2)}, {"a": torch.zeros(3)}])
    with pytest.raises(ValueError, match="at least one"):
        uniform_soup([])


def test_soup_of_recognizers_loads_and_runs(tmp_path: Path) -> None:
    """Two differently initialised recognizers of one architecture average into a file that the same
    architecture loads (stored in float16 as the shipped weights are) and runs."""
    paths = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        paths.append(tmp_path / f"m{seed}.safetensors")
        save_file(get_model("crnn_transformer_small", weights=None).state_dict(), str(paths[-1]))
    out = tmp_path / "soup.safetensors"
    assert main([str(out), *map(str, paths), "--dtype", "float16"]) == 0
    stored = load_file(str(out))
    assert stored["head.weight"].dtype == torch.float16
    expected = (load_file(str(paths[0]))["head.weight"] + load_file(str(paths[1]))["head.weight"]) / 2
    torch.testing.assert_close(stored["head.weight"].float(), expected, atol=1e-3, rtol=1e-3)
    model = get_model("crnn_transformer_small", weights=out).eval()
    with torch.inference_mode():
        assert model(torch.rand(1, 3, 32, 64)).shape == (1, 16, model.config.num_classes)
