"""Resumable training checkpoints split into small safetensors files (no pickle).

A checkpoint is a folder::

    model-00001.safetensors ...   model weights (``_orig_mod.`` prefixes of compiled models stripped)
    optim-00001.safetensors ...   every tensor of the optimizer and scheduler state
    trainer.json                  step, config, RNG states, non-tensor state and the file lists

Weights live apart from optimizer state and every file stays under ``max_file_bytes`` (default 15 MiB,
because the GPU machine returns at most 16 MiB per file), so a run can continue across 10-minute calls from
whatever the last call brought back. Files are written to a temporary folder and renamed into place, so an
interrupted save never leaves a half-written checkpoint. Used by recognition and detection training.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

__all__ = [
    "MAX_FILE_BYTES",
    "CheckpointState",
    "capture_rng",
    "load_checkpoint",
    "load_matching",
    "model_state_dict",
    "restore_rng",
    "save_checkpoint",
    "save_weights",
]

MAX_FILE_BYTES = 15 * 1024 * 1024
_MANIFEST = "trainer.json"


@dataclass
class CheckpointState:
    """What :func:`load_checkpoint` returns besides filling the model/optimizer/scheduler in place."""

    step: int
    config: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


def model_state_dict(model: nn.Module) -> dict[str, torch.Tensor]:
    """The model's state dict on CPU, contiguous, without ``torch.compile``'s ``_orig_mod.`` prefixes."""
    base = getattr(model, "_orig_mod", model)
    return {k.replace("_orig_mod.", ""): v.detach().to("cpu").contiguous() for k, v in base.state_dict().items()}


def load_matching(model: nn.Module, state: Mapping[str, torch.Tensor]) -> tuple[list[str], list[str]]:
    """Copy into ``model`` every tensor of ``state`` whose name and shape match one of its own (a warm start
    from a related architecture, e.g. a Transformer recognizer from a CRNN's backbone); the rest keep their
    initialisation. Returns the names loaded and the model's names left as they were."""
    own = model.state_dict()
    loaded = [k for k, v in state.items() if k in own and own[k].shape == v.shape]
    model.load_state_dict({k: state[k] for k in loaded}, strict=False)
    return loaded, [k for k in own if k not in set(loaded)]


def save_weights(model: nn.Module | Mapping[str, torch.Tensor], path: str | Path,
                 metadata: Mapping[str, str] | None = None) -> Path:
    """Export weights (a model or a state dict) as one safetensors file, e.g. the shipped default weights."""
    state = model_state_dict(model) if isinstance(model, nn.Module) else {
        k: v.detach().cpu().contiguous() for k, v in model.items()}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(path), metadata=dict(metadata or {}))
    return path


def capture_rng() -> dict[str, Any]:
    """Python, NumPy and torch (CPU + every CUDA device) RNG states, as JSON-able values and tensors."""
    state: dict[str, Any] = {"python": random.getstate(), "numpy": np.random.get_state(legacy=False),
                             "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: Mapping[str, Any]) -> None:
    """Inverse of :func:`capture_rng` (CUDA states are restored only when as many devices exist)."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"].cpu())
    cuda = state.get("cuda")
    if cuda is not None and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([t.cpu() for t in cuda])


def _flatten(obj: Any, tensors: dict[str, torch.Tensor], prefix: str) -> Any:
    """JSON skeleton of a nested state; tensors (and numpy arrays) go to ``tensors`` keyed by their path."""
    if isinstance(obj, torch.Tensor):
        tensors[prefix] = obj.detach().to("cpu").contiguous()
        return {"__tensor__": prefix}
    if isinstance(obj, np.ndarray):
        tensors[prefix] = torch.from_numpy(np.ascontiguousarray(obj))
        return {"__ndarray__": prefix}
    if isinstance(obj, Mapping):
        return {"__dict__": [[k, _flatten(v, tensors, f"{prefix}.{k}")] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        items = [_flatten(v, tensors, f"{prefix}.{i}") for i, v in enumerate(obj)]
        return {"__tuple__": items} if isinstance(obj, tuple) else items
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot checkpoint a value of type {type(obj).__name__} at {prefix!r}")


def _unflatten(obj: Any, tensors: Mapping[str, torch.Tensor]) -> Any:
    if isinstance(obj, list):
        return [_unflatten(v, tensors) for v in obj]
    if isinstance(obj, dict):
        if "__tensor__" in obj:
            return tensors[obj["__tensor__"]]
        if "__ndarray__" in obj:
            return tensors[obj["__ndarray__"]].numpy()
        if "__tuple__" in obj:
            return tuple(_unflatten(v, tensors) for v in obj["__tuple__"])
        if "__dict__" in obj:
            return {(tuple(k) if isinstance(k, list) else k): _unflatten(v, tensors) for k, v in obj["__dict__"]}
    return obj


def _write_shards(tensors: Mapping[str, torch.Tensor], folder: Path, stem: str, max_bytes: int) -> list[str]:
    """Write tensors into ``stem-00001.safetensors``... files of at most ``max_bytes`` each."""
    shards: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for key, tensor in tensors.items():
        nbytes = tensor.numel() * tensor.element_size()
        if nbytes > max_bytes:
            raise ValueError(f"tensor {key!r} ({nbytes} bytes) alone exceeds the {max_bytes}-byte file limit")
        if size + nbytes > max_bytes and shards[-1]:
            shards.append({})
            size = 0
        shards[-1][key] = tensor
        size += nbytes
    names = []
    for i, shard in enumerate(shards):
        if not shard and i > 0:
            continue
        name = f"{stem}-{i + 1:05d}.safetensors"
        save_file(dict(shard), str(folder / name))
        names.append(name)
    return names


def save_checkpoint(folder: str | Path, *, model: nn.Module, step: int, config: Mapping[str, Any],
                    optimizer: torch.optim.Optimizer | None = None, scheduler: Any = None,
                    extra: Mapping[str, Any] | None = None, rng: bool = True,
                    max_file_bytes: int = MAX_FILE_BYTES) -> Path:
    """Write a resumable checkpoint into ``folder`` (replacing any previous one atomically).

    Args:
        folder: checkpoint directory (created; its previous content is replaced).
        model: the (possibly compiled) model; weights go to ``model-*.safetensors``.
        step: optimizer steps taken so far.
        config: the JSON-able training config (stored so a resume can check or reuse it).
        optimizer / scheduler: anything with ``state_dict()``; their tensors go to ``optim-*.safetensors``.
        extra: small JSON-able or tensor state (epoch, best score, data-loader position...).
        rng: also store Python/NumPy/torch RNG states.
        max_file_bytes: the size cap for every file.
    """
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model_files = _write_shards(model_state_dict(model), tmp, "model", max_file_bytes)
    tensors: dict[str, torch.Tensor] = {}
    trainer = {
        "optimizer": _flatten(optimizer.state_dict(), tensors, "optimizer") if optimizer is not None else None,
        "scheduler": _flatten(scheduler.state_dict(), tensors, "scheduler") if scheduler is not None else None,
        "rng": _flatten(capture_rng(), tensors, "rng") if rng else None,
        "extra": _flatten(dict(extra or {}), tensors, "extra"),
    }
    optim_files = _write_shards(tensors, tmp, "optim", max_file_bytes) if tensors else []
    manifest = {"format": 1, "step": int(step), "config": dict(config), "model_files": model_files,
                "optim_files": optim_files, "trainer": trainer}
    (tmp / _MANIFEST).write_text(json.dumps(manifest))
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return folder


def load_checkpoint(folder: str | Path, *, model: nn.Module | None = None,
                    optimizer: torch.optim.Optimizer | None = None, scheduler: Any = None,
                    rng: bool = True, strict: bool = True) -> CheckpointState:
    """Restore a checkpoint written by :func:`save_checkpoint` into the given objects (in place).

    Pass only what you want restored: e.g. ``model`` alone to fine-tune from weights with a fresh optimizer.
    Tensors are loaded on CPU; ``load_state_dict`` moves them to the model's/optimizer's device.
    """
    folder = Path(folder)
    manifest_path = folder / _MANIFEST
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder} is not a checkpoint folder (no {_MANIFEST})")
    manifest = json.loads(manifest_path.read_text())
    if model is not None:
        state: dict[str, torch.Tensor] = {}
        for name in manifest["model_files"]:
            state.update(load_file(str(folder / name)))
        getattr(model, "_orig_mod", model).load_state_dict(state, strict=strict)
    tensors: dict[str, torch.Tensor] = {}
    for name in manifest["optim_files"]:
        tensors.update(load_file(str(folder / name)))
    trainer = manifest["trainer"]
    if optimizer is not None and trainer["optimizer"] is not None:
        optimizer.load_state_dict(_unflatten(trainer["optimizer"], tensors))
    if scheduler is not None and trainer["scheduler"] is not None:
        scheduler.load_state_dict(_unflatten(trainer["scheduler"], tensors))
    if rng and trainer["rng"] is not None:
        restore_rng(_unflatten(trainer["rng"], tensors))
    return CheckpointState(step=manifest["step"], config=manifest["config"],
                           extra=_unflatten(trainer["extra"], tensors))
