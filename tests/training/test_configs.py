"""The training configs in configs/ are valid, and they are exactly the recipes of the shipped weights.

Every recognition config builds the model its folder names with exactly the shipped parameter count; every
config file is cited by a shipped weight's meta, and every config a meta cites exists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from vision.models import get_entry, get_model, list_models
from vision.training.detection import load_config
from vision.training.recognition import load_config as load_recognition_config

ROOT = Path(__file__).resolve().parents[2]
RECOGNITION = sorted((ROOT / "configs" / "recognition").glob("*/*.json"))


def _cited(value: object) -> Iterator[str]:
    """Every ``configs/...json`` string anywhere in a nested meta value."""
    if isinstance(value, str):
        if value.startswith("configs/") and value.endswith(".json"):
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _cited(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _cited(v)


def _recognition_config(path: Path):
    return load_recognition_config(path)


def test_every_config_is_a_shipped_recipe_and_every_cited_config_exists() -> None:
    cited = {c for name in list_models() if get_entry(name).weights is not None
             for c in _cited(get_entry(name).weights.meta.get("recipe", {}))}
    on_disk = {str(p.relative_to(ROOT)) for p in (ROOT / "configs").rglob("*.json")}
    assert RECOGNITION and cited
    assert cited == on_disk


@pytest.mark.parametrize("path", RECOGNITION, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_recognition_config_builds_the_shipped_model(path: Path) -> None:
    cfg = _recognition_config(path)
    assert cfg.arch == path.parent.name
    model = get_model(cfg.arch, weights=None, **cfg.model)
    shipped = get_entry(cfg.arch).weights
    assert shipped is not None
    assert sum(p.numel() for p in model.parameters()) == shipped.meta["num_params"]


def test_last_stage_of_the_default_recognizer_builds_its_exact_config() -> None:
    """The last stage (every run of it, if a soup; scene, screen, receipt and multilingual text) builds the
    shipped block table, not only the same parameter count (``rect`` and ``rect_late`` tables have identical
    weights shapes), trains every weight, and draws from known generators only."""
    from vision.training.synth.mix import GENERATORS

    last = get_entry("crnn_mobilenet_small").weights.meta["recipe"]["stages"][-1]
    # a soup stage: every run it averages (an earlier stage's weights, named by a string, is no run)
    runs = [r for r in last["soup"] if isinstance(r, dict)] if "soup" in last else [last]
    for run in runs:
        cfg = _recognition_config(ROOT / run["config"])
        assert cfg.freeze == ()
        assert set(cfg.mix) == {"words", "multilingual", "scene", "overlay", "receipt"} <= set(GENERATORS)
        assert abs(sum(cfg.mix.values()) - 1.0) < 1e-6
        built = get_model(cfg.arch, weights=None, **cfg.model)
        assert built.config == get_model(cfg.arch, weights=None).config


@pytest.mark.parametrize("name", ["db_mobilenet_v3_large", "db_mobilenet_v3_large_photo"])
def test_detection_config_loads_and_names_its_model(name: str) -> None:
    recipe = get_entry(name).weights.meta["recipe"]
    cfg = load_config(str(ROOT / recipe["config"]))
    assert cfg.arch == "db_mobilenet_v3_large"  # the photo detector is the same network, trained further
    assert get_model(cfg.arch, weights=None).config == get_model(name, weights=None).config
    assert json.loads((ROOT / recipe["config"]).read_text())["data"]["val_pages"] == cfg.data.val_pages


def test_recognition_config_takes_set_overrides() -> None:
    """``--set KEY=JSON`` (stage 12's runs c and d are their configs with ``--set seed=N``) overrides a field;
    an unknown field is refused."""
    path = ROOT / "configs" / "recognition" / "crnn_mobilenet_small" / "stage12_soup_enumerations.json"
    base = load_recognition_config(path)
    tuned = load_recognition_config(path, ["seed=65", 'fonts=["a", "b"]'])
    assert (base.seed, tuned.seed, tuned.fonts) == (63, 65, ("a", "b"))
    assert tuned.mix == base.mix
    with pytest.raises(SystemExit, match="unknown config fields"):
        load_recognition_config(path, ["sead=65"])
