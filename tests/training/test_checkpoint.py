"""Resumable checkpoints: a resumed run continues exactly like an uninterrupted one; files stay small."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from torch import nn

from vision.training.checkpoint import load_checkpoint, load_matching, save_checkpoint, save_weights


def _setup(seed: int = 0) -> tuple[nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=20)
    return model, opt, sched


def _train(model: nn.Module, opt: torch.optim.Optimizer, sched: object, steps: int) -> list[float]:
    losses = []
    for _ in range(steps):
        x = torch.randn(16, 8)  # drawn from the global torch RNG, which the checkpoint restores
        noise = float(np.random.rand()) + random.random()
        loss = (model(x) ** 2).mean() + 0.0 * noise
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item() + noise)
    return losses


def test_resume_matches_uninterrupted_run(tmp_path) -> None:
    model, opt, sched = _setup()
    torch.manual_seed(1), np.random.seed(1), random.seed(1)
    reference = _train(model, opt, sched, 10)

    model, opt, sched = _setup()
    torch.manual_seed(1), np.random.seed(1), random.seed(1)
    first = _train(model, opt, sched, 5)
    save_checkpoint(tmp_path / "ckpt", model=model, optimizer=opt, scheduler=sched, step=5,
                    config={"lr": 1e-2}, extra={"epoch": 2, "best": 0.5})
    _train(model, opt, sched, 3)  # diverge: the restore must undo all of this

    model2, opt2, sched2 = _setup(seed=123)
    state = load_checkpoint(tmp_path / "ckpt", model=model2, optimizer=opt2, scheduler=sched2)
    assert state.step == 5 and state.config == {"lr": 1e-2} and state.extra == {"epoch": 2, "best": 0.5}
    second = _train(model2, opt2, sched2, 5)
    assert first + second == pytest.approx(reference, rel=1e-6)


def test_files_are_split_under_the_cap(tmp_path) -> None:
    model = nn.Sequential(*[nn.Linear(256, 256) for _ in range(4)])  # ~1 MiB of fp32 weights
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(2, 256)).sum().backward()
    opt.step()
    folder = save_checkpoint(tmp_path / "c", model=model, optimizer=opt, step=1, config={},
                             max_file_bytes=300_000)
    files = sorted(p.name for p in folder.iterdir())
    assert any(f.startswith("model-") for f in files) and any(f.startswith("optim-") for f in files)
    assert len([f for f in files if f.startswith("model-")]) >= 3
    assert all((folder / f).stat().st_size < 300_000 + 20_000 for f in files if f.endswith(".safetensors"))
    fresh = nn.Sequential(*[nn.Linear(256, 256) for _ in range(4)])
    load_checkpoint(folder, model=fresh, rng=False)
    for a, b in zip(model.parameters(), fresh.parameters()):
        assert torch.equal(a, b)


def test_compiled_prefix_is_stripped_and_weights_export(tmp_path) -> None:
    model = nn.Linear(3, 2)
    wrapper = nn.Module()
    wrapper._orig_mod = model  # what torch.compile's OptimizedModule exposes
    folder = save_checkpoint(tmp_path / "c", model=wrapper, step=0, config={}, rng=False)
    target = nn.Linear(3, 2)
    load_checkpoint(folder, model=target)
    assert torch.equal(target.weight, model.weight)
    path = save_weights(model, tmp_path / "w.safetensors", metadata={"arch": "linear"})
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        assert set(f.keys()) == {"weight", "bias"} and f.metadata() == {"arch": "linear"}


def test_missing_checkpoint_raises(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path)


def test_warm_start_loads_the_shared_backbone_only() -> None:
    """A Transformer recognizer built on the CRNN's backbone takes the CRNN's backbone weights, and nothing of
    its sequence encoder or head (different shapes or names)."""
    from vision.models import get_model

    backbone = {"width_mult": 1.25, "blocks": "rect_late", "out_channels": 576}
    crnn = get_model("crnn_mobilenet_small", weights=None)
    torch.manual_seed(0)
    transformer = get_model("crnn_transformer_small", weights=None, backbone=backbone)
    head_before = transformer.head.weight.clone()
    loaded, kept = load_matching(transformer, crnn.state_dict())
    assert loaded and all(k.startswith(("backbone.", "head.bias")) for k in loaded)
    assert sum(k.startswith("backbone.") for k in loaded) == len(crnn.backbone.state_dict())
    assert any(k.startswith("blocks.") for k in kept)
    for k, v in crnn.backbone.state_dict().items():
        torch.testing.assert_close(transformer.backbone.state_dict()[k], v, rtol=0, atol=0)
    assert "head.weight" not in loaded  # 256 inputs here, 320 (the BiLSTM's) there
    torch.testing.assert_close(transformer.head.weight, head_before, rtol=0, atol=0)
