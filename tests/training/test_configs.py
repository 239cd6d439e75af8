"""The training configs in configs/ are valid: every field known, every model builds with its overrides."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from vision.models import get_model
from vision.models._registry import get_entry
from vision.training.recognition import _config, add_arguments

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs").glob("recognition_*.json"))
# measured probes' recipes; their weights did not ship
PROBES = {"recognition_crnn_transformer_small_hybrid", "recognition_crnn_transformer_small_hybrid_ft",
          "recognition_crnn_transformer_small_local"}
GENERATOR_MIXES = {"recognition_crnn_mobilenet_small_scene", "recognition_crnn_mobilenet_small_scene2",
                   "recognition_crnn_transformer_small_scene", "recognition_crnn_transformer_small_scene2"}


def test_configs_exist() -> None:
    assert [p.stem for p in CONFIGS] == ["recognition_crnn_mobilenet_small", "recognition_crnn_mobilenet_small_ft",
                                         "recognition_crnn_mobilenet_small_ft2", "recognition_crnn_mobilenet_small_ft3",
                                         "recognition_crnn_mobilenet_small_ft4", "recognition_crnn_mobilenet_small_ft5",
                                         "recognition_crnn_mobilenet_small_ft6", "recognition_crnn_mobilenet_small_ft7",
                                         "recognition_crnn_mobilenet_small_scene",
                                         "recognition_crnn_mobilenet_small_scene2",
                                         "recognition_crnn_transformer_small",
                                         "recognition_crnn_transformer_small_fax",
                                         "recognition_crnn_transformer_small_ft",
                                         "recognition_crnn_transformer_small_ft2",
                                         "recognition_crnn_transformer_small_hybrid",
                                         "recognition_crnn_transformer_small_hybrid_ft",
                                         "recognition_crnn_transformer_small_kd",
                                         "recognition_crnn_transformer_small_local",
                                         "recognition_crnn_transformer_small_scene",
                                         "recognition_crnn_transformer_small_scene2",
                                         "recognition_crnn_transformer_small_short",
                                         "recognition_crnn_transformer_small_shortfax",
                                         "recognition_crnn_transformer_small_warm"]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_recognition_config_builds_its_model(path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = _config(parser.parse_args(["--config", str(path)]))
    assert re.sub(r"(_(ft\d*|warm|hybrid|kd|local|fax|short|shortfax|scene\d*))+$", "", path.stem).endswith(cfg.arch)
    model = get_model(cfg.arch, weights=None, **cfg.model)
    params = sum(p.numel() for p in model.parameters())
    shipped = get_entry(cfg.arch).weights
    if shipped is not None and path.stem not in PROBES:  # a shipped recipe builds exactly the shipped model
        assert params == shipped.meta["num_params"]
    assert params > 1_000_000


def test_latest_recipe_builds_the_default_architecture() -> None:
    """The newest recipe of the default architecture (``scene2``: the last stage of the shipped weights) builds
    the same config (block table included), not only the same parameter count: ``rect`` and ``rect_late``
    tables have identical weights shapes."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    latest = [p for p in CONFIGS if p.stem.startswith("recognition_crnn_mobilenet_small")][-1]
    cfg = _config(parser.parse_args(["--config", str(latest)]))
    assert latest.stem == "recognition_crnn_mobilenet_small_scene2"
    assert cfg.freeze == () and set(cfg.mix) == {"words", "multilingual", "scene", "overlay", "receipt"}
    assert get_model(cfg.arch, weights=None, **cfg.model).config == get_model(cfg.arch, weights=None).config


@pytest.mark.parametrize("name", sorted(GENERATOR_MIXES))
def test_generator_mix_configs_name_known_generators(name: str) -> None:
    from vision.training.synth.mix import GENERATORS

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = _config(parser.parse_args(["--config", str(CONFIGS[0].parent / f"{name}.json")]))
    assert cfg.mix and set(cfg.mix) <= set(GENERATORS) and abs(sum(cfg.mix.values()) - 1.0) < 1e-6
