"""Load SAM checkpoints in the official layout (``sam_vit_b_01ec64.pth`` and siblings) or as safetensors.

:func:`convert_official` is the pure ``state_dict -> state_dict`` filter; :func:`read_state_dict` reads a file
(``.pth`` through ``torch.load(weights_only=True)``, anything else as safetensors) from a path or a URL
(``file://``, ``http(s)://``; downloads land in a cache folder); :func:`load_sam` builds the model on the meta
device and loads strictly, so that a 2.5 GB ViT-H never allocates twice.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import torch
from torch import Tensor

from vision.errors import WeightsError
from vision.models.segmentation.sam.sam import CONFIGS, Sam, build_sam

__all__ = ["convert_official", "default_cache_dir", "infer_variant", "load_sam", "read_state_dict"]

_PREFIXES = ("module.", "model.", "sam.")
_UNUSED = ("pixel_mean", "pixel_std")  # buffers of some re-saved reference models; the predictor normalises


def convert_official(state: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Map an official SAM state dict onto :class:`Sam` (the names match; wrappers' prefixes and the
    reference's pixel normalisation buffers are dropped). Raises :class:`WeightsError` on a non-SAM dict."""
    out: dict[str, Tensor] = {}
    for key, value in state.items():
        for prefix in _PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix):]
                break
        if key in _UNUSED:
            continue
        out[key] = value
    if not any(k.startswith("image_encoder.") for k in out) or not any(k.startswith("mask_decoder.") for k in out):
        raise WeightsError(None, "not a SAM checkpoint: no image_encoder.* / mask_decoder.* parameters")
    return out


def infer_variant(state: Mapping[str, Tensor]) -> str:
    """The :data:`CONFIGS` row whose encoder width and depth match ``state`` (e.g. ``"vit_h"``)."""
    width = state["image_encoder.pos_embed"].shape[-1]
    depth = 1 + max(int(k.split(".")[2]) for k in state if k.startswith("image_encoder.blocks."))
    for name, cfg in CONFIGS.items():
        if (cfg.encoder.embed_dim, cfg.encoder.depth) == (width, depth):
            return name
    raise WeightsError(None, f"no SAM variant has a {depth}-block, {width}-wide encoder")


def default_cache_dir() -> Path:
    """``$VISION_CACHE/sam`` or ``~/.cache/vision/sam``: where downloaded checkpoints are kept."""
    root = os.environ.get("VISION_CACHE") or Path.home() / ".cache" / "vision"
    return Path(root) / "sam"


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
        with urllib.request.urlopen(url, timeout=timeout) as resp, tempfile.NamedTemporaryFile(
                dir=cache, delete=False, suffix=".part") as tmp:
            shutil.copyfileobj(resp, tmp, length=1 << 20)
    except OSError as exc:
        raise WeightsError(url, f"download failed ({exc})") from exc
    os.replace(tmp.name, target)  # atomic: a half-written file never looks cached
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

    Raises:
        WeightsError: unreadable file, wrong variant, or missing / unexpected / mis-shaped keys.
    """
    state = convert_official(source if isinstance(source, Mapping) else read_state_dict(source, cache_dir=cache_dir))
    variant = variant or infer_variant(state)
    with torch.device("meta"):
        model = build_sam(variant)
    expected = {k: v.shape for k, v in model.state_dict().items()}
    bad = sorted(k for k in expected.keys() & state.keys() if state[k].shape != expected[k])
    if bad or expected.keys() != state.keys():
        missing, unexpected = sorted(expected.keys() - state.keys()), sorted(state.keys() - expected.keys())
        raise WeightsError(str(source) if not isinstance(source, Mapping) else None,
                           f"checkpoint does not fit sam_{variant}: missing {missing[:5]}, unexpected {unexpected[:5]}, "
                           f"wrong shapes {bad[:5]} ({len(missing)}/{len(unexpected)}/{len(bad)} in all)")
    model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True, assign=True)
    return model.eval()
