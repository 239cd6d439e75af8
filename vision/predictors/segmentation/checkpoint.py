"""Read SAM checkpoints: official ``.pth`` files or safetensors, from a path or a URL, into a model.

:func:`read_state_dict` reads a file (``.pth`` through ``torch.load(weights_only=True)``, anything else as
safetensors) from a path or a URL (``file://``, ``http(s)://``; downloads land in :func:`default_cache_dir`,
written atomically); :func:`load_sam` converts and loads it strictly
(:func:`vision.models.segmentation.sam.checkpoint.sam_from_state_dict`).
"""

from __future__ import annotations

import hashlib
import shutil
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import torch
from torch import Tensor

from vision._atomic import atomic_path
from vision.errors import WeightsError
from vision.models.segmentation.sam.checkpoint import sam_from_state_dict
from vision.models.segmentation.sam.sam import Sam
from vision.settings import cache_dir as _cache_dir

__all__ = ["default_cache_dir", "load_sam", "read_state_dict"]


def default_cache_dir() -> Path:
    """Where downloaded checkpoints are kept: :func:`vision.settings.cache_dir` ``("sam")``."""
    return _cache_dir("sam")


def _fetch(url: str, cache_dir: Path | None, timeout: float) -> Path:
    """Local path of ``url``: ``file://`` URLs directly, others downloaded once into ``cache_dir``."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        return Path(urllib.request.url2pathname(parsed.path))
    if parsed.scheme not in ("http", "https"):
        raise WeightsError(url, f"unsupported URL scheme {parsed.scheme!r}")
    cache = cache_dir or default_cache_dir()
    name = Path(parsed.path).name or "checkpoint.pth"
    target = cache / f"{hashlib.sha256(url.encode()).hexdigest()[:12]}-{name}"
    if target.is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_path(target) as tmp, urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as f:
            shutil.copyfileobj(resp, f, length=1 << 20)  # a half-written file never looks cached
    except OSError as exc:
        raise WeightsError(url, f"download failed ({exc})") from exc
    return target


def read_state_dict(source: str | Path, *, cache_dir: Path | None = None, timeout: float = 60.0) -> dict[str, Tensor]:
    """Tensors of a checkpoint file or URL: ``.pth``/``.pt`` via ``torch.load(weights_only=True)``,
    otherwise safetensors. Raises :class:`WeightsError` when missing or unreadable."""
    text = str(source)
    path = _fetch(text, cache_dir, timeout) if "://" in text else Path(text)
    if not path.is_file():
        raise WeightsError(text, "checkpoint file not found")
    try:
        if path.suffix in (".pth", ".pt", ".bin"):
            state = torch.load(path, map_location="cpu", weights_only=True)
        else:
            from safetensors.torch import load_file

            state = load_file(str(path))
    except Exception as exc:  # torch/safetensors raise assorted types for damaged files
        raise WeightsError(text, f"not a readable checkpoint ({exc})") from exc
    if not isinstance(state, Mapping):
        raise WeightsError(text, f"expected a state dict, found {type(state).__name__}")
    return dict(state)


def load_sam(source: str | Path | Mapping[str, Tensor], *, variant: str | None = None,
             cache_dir: Path | None = None) -> Sam:
    """Build SAM and load a checkpoint strictly.

    Args:
        source: path, URL or an in-memory state dict in the official layout.
        variant: ``"vit_b"``, ``"vit_l"``, ``"vit_h"`` (or ``"test"``); inferred from the tensors when ``None``.
        cache_dir: where URLs are downloaded (default :func:`default_cache_dir`).

    Raises:
        WeightsError: unreadable file, wrong variant, or missing / unexpected / mis-shaped keys.
    """
    if isinstance(source, Mapping):
        return sam_from_state_dict(source, variant=variant)
    return sam_from_state_dict(read_state_dict(source, cache_dir=cache_dir), variant=variant, source=str(source))
