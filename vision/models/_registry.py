"""One registry mapping architecture names to builders and their default weights.

Model modules register builders with :func:`register_model`; everything else (predictors, CLI, API, UI,
tests) finds models through :func:`list_models` and :func:`get_model`.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import torch
from torch import nn

from vision.errors import WeightsError

__all__ = ["Weights", "ModelEntry", "register_model", "list_models", "get_model", "get_entry", "default_model",
           "load_weights", "weights_sha256", "WEIGHTS_DIR"]

WEIGHTS_DIR = Path(__file__).parent / "weights"
_TASKS = ("detection", "recognition", "segmentation", "orientation")


@dataclass(frozen=True)
class Weights:
    """A shipped weight file: its name under ``vision/models/weights``, checksum and model-card facts.

    ``meta`` holds at least ``num_params``, ``recipe`` (citing the checked-in training configs), ``data`` and ``metrics``.
    """

    file: str
    sha256: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return WEIGHTS_DIR / self.file


@dataclass(frozen=True)
class ModelEntry:
    """A registered architecture: its builder, task and default weights (if any ship)."""

    name: str
    task: str
    builder: Callable[..., nn.Module]
    weights: Weights | None
    default: bool


_REGISTRY: dict[str, ModelEntry] = {}


def register_model(name: str, *, task: str, weights: Weights | None = None,
                   default: bool = False) -> Callable[[Callable[..., nn.Module]], Callable[..., nn.Module]]:
    """Decorator registering ``builder(**kwargs) -> nn.Module`` under ``name``; duplicates raise."""
    if task not in _TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {_TASKS}")

    def wrap(builder: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
        if name in _REGISTRY:
            raise ValueError(f"model {name!r} is already registered")
        _REGISTRY[name] = ModelEntry(name, task, builder, weights, default)
        return builder

    return wrap


@functools.cache
def _import_model_modules() -> None:
    """Import every module under ``vision.models`` so that all builders are registered."""
    import vision.models as pkg

    for info in pkgutil.walk_packages(pkg.__path__, prefix="vision.models."):
        if info.name.rsplit(".", 1)[-1].startswith("_") and not info.ispkg:
            continue
        importlib.import_module(info.name)


def list_models(task: str | None = None, pattern: str | None = None) -> list[str]:
    """Sorted names of registered models, optionally filtered by task and a glob pattern."""
    _import_model_modules()
    names = [e.name for e in _REGISTRY.values() if task is None or e.task == task]
    if pattern:
        names = fnmatch.filter(names, pattern)
    return sorted(names)


def get_entry(name: str) -> ModelEntry:
    """The registry entry for ``name`` (raises ``ValueError`` naming the known models otherwise)."""
    _import_model_modules()
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(list_models())}")
    return _REGISTRY[name]


def default_model(task: str) -> str:
    """The architecture used when a predictor is built without ``arch``."""
    _import_model_modules()
    for entry in _REGISTRY.values():
        if entry.task == task and entry.default:
            return entry.name
    raise ValueError(f"no default model registered for task {task!r}")


@functools.lru_cache(maxsize=32)
def _sha256(path: Path, mtime: float) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def weights_sha256(name: str, weights: str | Path | None = "default") -> str | None:
    """The sha256 of the weights :func:`get_model` would load for ``name`` (the registry's record for
    ``"default"``, the file's for a path), or ``None`` when there are none (random init, a missing file)."""
    if weights is None:
        return None
    if weights == "default":
        entry = get_entry(name)
        return entry.weights.sha256 if entry.weights is not None else None
    path = Path(weights)
    return _sha256(path, path.stat().st_mtime) if path.is_file() else None


def load_weights(path: str | Path, *, sha256: str | None = None) -> dict[str, torch.Tensor]:
    """Read a safetensors state dict, checking its checksum when one is given."""
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise WeightsError(str(path), "weight file not found")
    if sha256 is not None and _sha256(path, path.stat().st_mtime) != sha256:
        raise WeightsError(str(path), "sha256 mismatch: the file is not the one the registry records")
    try:
        state = load_file(str(path))
    except Exception as exc:  # safetensors raises bare SafetensorError/OSError subclasses
        raise WeightsError(str(path), f"not a readable safetensors file ({exc})") from exc
    # Weights may ship in half precision to halve the package; models are built and run from fp32.
    return {k: v.float() if v.dtype in (torch.float16, torch.bfloat16) else v for k, v in state.items()}


def get_model(name: str, *, weights: str | Path | None = "default", **kwargs: Any) -> nn.Module:
    """Build ``name`` and load its weights.

    Args:
        name: a registered architecture.
        weights: ``"default"`` for the shipped file, a path to a safetensors file, or ``None`` for a
            randomly initialised model.
        kwargs: forwarded to the builder (config overrides).
    """
    entry = get_entry(name)
    if weights is None:
        return entry.builder(**kwargs)
    if weights == "default":
        if entry.weights is None:
            raise WeightsError(name, "no default weights ship with this architecture; pass weights=PATH or None")
        state = load_weights(entry.weights.path, sha256=entry.weights.sha256)
    else:
        state = load_weights(weights)
    with torch.device("meta"):
        model = entry.builder(**kwargs)
    try:
        model.load_state_dict(state, strict=True, assign=True)
    except RuntimeError as exc:
        raise WeightsError(str(weights if weights != "default" else entry.weights.path),
                           f"weights do not fit {name}: {exc}") from exc
    if any(t.is_meta for t in (*model.parameters(), *model.buffers())):
        model = entry.builder(**kwargs)  # some buffer is not persisted: build on CPU and copy instead
        model.load_state_dict(state, strict=True)
    return model.eval()
