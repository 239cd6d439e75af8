"""SAM's official checkpoint layout: key-for-key against the reference package, and strict loading from
``.pth`` / safetensors files, ``file://`` URLs and a loopback HTTP server."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from vision.errors import WeightsError
from vision.models import list_models
from vision.models.segmentation.sam import build_sam, convert_official
from vision.models.segmentation.sam.checkpoint import infer_variant
from vision.predictors.segmentation.checkpoint import load_sam, read_state_dict


@pytest.mark.parametrize("variant", ["vit_b", "vit_l", "vit_h"])
def test_layout_matches_official_key_for_key(variant: str) -> None:
    """Every key and shape of the official model, built on the meta device (no memory, no time)."""
    from segment_anything import sam_model_registry

    with torch.device("meta"):
        ref = {k: tuple(v.shape) for k, v in sam_model_registry[variant]().state_dict().items()}
        ours = {k: tuple(v.shape) for k, v in build_sam(variant).state_dict().items()}
    assert ours == ref
    assert len(ours) == {"vit_b": 314, "vit_l": 482, "vit_h": 594}[variant]


def test_registered_builders() -> None:
    assert {"sam_vit_b", "sam_vit_l", "sam_vit_h", "sam_test"} <= set(list_models(task="segmentation"))


@pytest.fixture(scope="module")
def official_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, torch.Tensor]]:
    """A tiny SAM saved the way the official ``.pth`` files are: a plain ``torch.save``d state dict."""
    torch.manual_seed(0)
    state = build_sam("test").state_dict()
    path = tmp_path_factory.mktemp("ckpt") / "sam_test.pth"
    torch.save(state, path)
    return path, state


def _assert_loaded(model: torch.nn.Module, state: dict[str, torch.Tensor]) -> None:
    got = model.state_dict()
    assert got.keys() == state.keys()
    assert all(torch.equal(got[k], state[k]) for k in state)


def test_load_pth_strict(official_file) -> None:
    path, state = official_file
    _assert_loaded(load_sam(path, variant="test"), state)
    _assert_loaded(load_sam(path), state)  # variant inferred from the tensors


def test_load_safetensors(official_file, tmp_path: Path) -> None:
    _, state = official_file
    path = tmp_path / "sam_test.safetensors"
    save_file({k: v.contiguous() for k, v in state.items()}, str(path))
    _assert_loaded(load_sam(path, variant="test"), state)


def test_load_file_url(official_file) -> None:
    path, state = official_file
    _assert_loaded(load_sam(path.resolve().as_uri(), variant="test"), state)


def test_load_http_url_cached(official_file, tmp_path: Path) -> None:
    """Download from a server on the loopback interface, then reuse the cached copy once it is gone."""
    path, state = official_file
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(path.parent))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/{path.name}"
    try:
        _assert_loaded(load_sam(url, variant="test", cache_dir=tmp_path), state)
    finally:
        server.shutdown()
        server.server_close()
    cached = list(tmp_path.glob("*sam_test.pth"))
    assert len(cached) == 1 and not list(tmp_path.glob(".*.tmp"))
    _assert_loaded(load_sam(url, variant="test", cache_dir=tmp_path), state)  # server down: the cache serves
    with pytest.raises(WeightsError, match="download failed"):
        read_state_dict(url.replace(path.name, "other.pth"), cache_dir=tmp_path, timeout=5)


def test_filter_strips_wrappers_and_reference_buffers(official_file) -> None:
    _, state = official_file
    wrapped = {f"module.{k}": v for k, v in state.items()} | {"pixel_mean": torch.zeros(3, 1, 1)}
    assert convert_official(wrapped).keys() == state.keys()
    assert infer_variant(state) == "test"


def test_bad_checkpoints_raise(official_file, tmp_path: Path) -> None:
    _, state = official_file
    with pytest.raises(WeightsError, match="not found"):
        load_sam(tmp_path / "missing.pth")
    with pytest.raises(WeightsError, match="not a SAM checkpoint"):
        load_sam({"fc.weight": torch.zeros(2, 2)})
    missing = dict(state)
    missing.pop("mask_decoder.iou_token.weight")
    with pytest.raises(WeightsError, match="missing \\['mask_decoder.iou_token.weight'\\]"):
        load_sam(missing, variant="test")
    reshaped = dict(state) | {"image_encoder.pos_embed": torch.zeros(1, 8, 8, 64)}
    with pytest.raises(WeightsError, match="wrong shapes"):
        load_sam(reshaped, variant="test")
    with pytest.raises(WeightsError, match="does not fit sam_vit_b"):
        load_sam(state, variant="vit_b")
    junk = tmp_path / "junk.pth"
    junk.write_bytes(b"not a zip file")
    with pytest.raises(WeightsError, match="not a readable checkpoint"):
        load_sam(junk)
