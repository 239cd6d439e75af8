"""ONNX export, a cache of exported models, and an onnxruntime runner that predictors call like a model.

``export_onnx`` uses the TorchScript-based exporter (``dynamo=False``): it handles ``nn.LSTM``, marks the
chosen axes dynamic and takes under a second for our detector and recognizer (the dynamo exporter takes
about 19 s for the detector on 2 cores, for the same graph speed). :class:`OnnxRunner` takes and returns
torch tensors so that it drops into a predictor in place of the ``nn.Module``.

:func:`cached_runner` is what the predictors use on CPU: the export is written once under
:func:`default_cache_dir`, named by a sha256 over the model's structure and weights (:func:`model_key`),
so new weights (or a wider variant) get a new file and never a stale graph. The key covers the weights
(every byte), the architecture (the module tree), the opset, the export settings, the torch version and
the recipe (:data:`_CACHE_FORMAT`). A registered model with a weight file is keyed without being built
(:func:`weights_key`: the file's sha256, the architecture's name, the source of ``vision.models`` and the
torch and torchvision versions), so that a cache hit costs neither the model's construction nor the
import of torchvision (about 2 s of a one-page ``vision ocr`` on a 2-core CPU). A current file is never
written again (not even its mtime changes within :data:`TOUCH_AFTER` seconds); a missing one is exported
by one process at a time (an advisory ``fcntl`` lock beside it, where the platform has one) into a
temporary sibling renamed into place, so processes building predictors at once never read a partial file
and export it once. Where the cache
cannot be written (read-only home, sandbox) the model is exported to a temporary folder instead; nothing
needs the network.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from vision._atomic import atomic_path
from vision.settings import cache_dir

__all__ = [
    "OnnxRunner",
    "cached_runner",
    "default_cache_dir",
    "export_onnx",
    "model_key",
    "onnx_available",
    "weights_key",
]

_log = logging.getLogger(__name__)
_CACHE_FORMAT = 1  # bump when the export recipe changes, so that older cached files are not reused
KEEP_PER_NAME = 6  # cached exports kept per model name (most recently used first)
TOUCH_AFTER = 3600.0  # a cached file's mtime (its last use, for pruning) is refreshed when older than this
OPSET = 17


def export_onnx(model: nn.Module, path: str | Path, example: torch.Tensor, *,
                dynamic_axes: Mapping[str, Mapping[int, str]] | None = None, input_name: str = "images",
                output_name: str = "logits", opset: int = OPSET) -> Path:
    """Export ``model`` (eval, fp32) traced on ``example`` to ``path``; returns the path.

    Default dynamic axes: batch and width of ``[N, 3, H, W]`` images, batch and time of ``[N, T, C]`` outputs.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    axes = dict(dynamic_axes) if dynamic_axes is not None else {input_name: {0: "batch", 3: "width"},
                                                                 output_name: {0: "batch", 1: "time"}}
    with warnings.catch_warnings():  # the TorchScript exporter warns about its deprecation and LSTM batch sizes
        warnings.simplefilter("ignore")
        with torch.inference_mode(False), torch.no_grad():
            torch.onnx.export(model.eval(), (example,), str(path), input_names=[input_name],
                              output_names=[output_name], dynamic_axes=axes, opset_version=opset,
                              dynamo=False)
    return path


class OnnxRunner:
    """``runner(tensor) -> tensor`` over an onnxruntime session (CPU unless ``providers`` say otherwise).

    Args:
        path: the ``.onnx`` file (the session holds the graph once built; the file may then go).
        providers: onnxruntime execution providers, in order of preference.
        threads: intra-op threads (``None``: onnxruntime's default, one per physical core).
        spin: let idle worker threads spin between runs. Off by default: in an OCR pipeline the caller does
            NumPy/OpenCV/torch work between runs on the same few cores, and spinning workers steal them
            (FUNSD pages on our 2-core CPU: 0.34 s/page without spinning, 0.45 s/page with it).
    """

    def __init__(self, path: str | Path, *, providers: Sequence[str] | None = None, threads: int | None = None,
                 spin: bool = False) -> None:
        import onnxruntime as ort  # lazy: optional dependency (the "fast" extra)

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        self.session = ort.InferenceSession(str(path), options, providers=list(providers or ["CPUExecutionProvider"]))
        self.input_name = self.session.get_inputs()[0].name

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        out = self.session.run(None, {self.input_name: np.ascontiguousarray(x.detach().float().cpu().numpy())})[0]
        return torch.from_numpy(out)


def onnx_available() -> bool:
    """Whether onnxruntime and onnx (torch's exporter writes through it) can be imported: the predictors'
    CPU default needs both (the "fast" extra)."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def default_cache_dir() -> Path:
    """Where exported models are kept: :func:`vision.settings.cache_dir` ``("onnx")``."""
    return cache_dir("onnx")


def model_key(model: nn.Module, *extra: object) -> str:
    """sha256 (hex) identifying an export of ``model``: its module tree (layers, sizes, activations), every
    parameter and buffer (name, dtype, shape, bytes), the torch version, the cache format and ``extra``
    (export settings). Equal keys mean the exported graphs compute the same function."""
    h = hashlib.sha256(f"{_CACHE_FORMAT}|{torch.__version__}|{model!r}|{extra!r}".encode())
    for name, tensor in model.state_dict().items():
        t = tensor.detach().cpu().contiguous().reshape(-1)
        h.update(f"|{name}|{t.dtype}|{tuple(tensor.shape)}|".encode())
        h.update(t.view(torch.uint8).numpy())
    return h.hexdigest()


@functools.cache
def _models_source() -> str:
    """sha256 over the source files of ``vision.models`` (builders, layers, configs): a change to any of
    them may change the graph a registered name builds."""
    root = Path(__file__).resolve().parents[1] / "models"
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(f"|{path.relative_to(root).as_posix()}|".encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def weights_key(arch: str, weights_sha256: str, *extra: object) -> str:
    """sha256 (hex) identifying the registered ``arch`` built with the weight file of ``weights_sha256``,
    without building it: the cache format, the torch and torchvision versions, the source of
    ``vision.models``, the name, the weights' checksum and ``extra`` (the wrapper, say). Equal keys mean the
    same builder ran the same code on the same weights."""
    fields = (_CACHE_FORMAT, torch.__version__, _version("torchvision"), _models_source(), arch,
              weights_sha256, extra)
    return hashlib.sha256(repr(fields).encode()).hexdigest()


def cached_runner(model: nn.Module | Callable[[], nn.Module], example: torch.Tensor, *, name: str,
                  dynamic_axes: Mapping[str, Mapping[int, str]] | None = None, output_name: str = "logits",
                  cache_dir: str | Path | None = None, threads: int | None = None,
                  providers: Sequence[str] | None = None, identity: str | None = None) -> OnnxRunner:
    """An :class:`OnnxRunner` for ``model``, exported once into ``cache_dir`` (default
    :func:`default_cache_dir`) under ``{name}-{key[:24]}.onnx``.

    ``model`` is a module or a function building it; the key is :func:`model_key` of the module, or, when
    ``identity`` (a :func:`weights_key`) is given, that identity with the export settings, and then the
    function is called only when the file must be exported. ``model`` itself is left untouched (a CPU fp32
    copy is exported). A cached file that onnxruntime cannot load is exported again; when the cache folder
    cannot be written, the export goes to a temporary folder that is removed once the session holds the
    graph.
    """
    axes = {k: dict(v) for k, v in dynamic_axes.items()} if dynamic_axes is not None else None
    settings = (tuple(example.shape[1:]), axes, output_name, OPSET)
    if identity is not None:
        key = hashlib.sha256(f"{identity}|{settings!r}".encode()).hexdigest()
    else:
        model = model if isinstance(model, nn.Module) else model()
        key = model_key(model, *settings)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = folder / f"{name}-{key[:24]}.onnx"
    runner = _load(target, providers, threads)
    if runner is not None:
        return runner
    built = model if isinstance(model, nn.Module) else model()
    export = copy.deepcopy(built).float().cpu().eval()
    if not _writable(folder):
        _log.info("ONNX cache %s is not writable; exporting to a temporary folder", folder)
        with tempfile.TemporaryDirectory() as scratch:
            path = export_onnx(export, Path(scratch) / f"{name}.onnx", example.float().cpu(),
                               dynamic_axes=axes, output_name=output_name)
            return OnnxRunner(path, providers=providers, threads=threads)
    with _locked(folder / f".{target.name}.lock"):
        runner = _load(target, providers, threads)  # another process may have exported it meanwhile
        if runner is not None:
            return runner
        with atomic_path(target) as tmp:  # concurrent readers never see a half-written file
            export_onnx(export, tmp, example.float().cpu(), dynamic_axes=axes, output_name=output_name)
    _prune(folder, name, keep=KEEP_PER_NAME)
    return OnnxRunner(target, providers=providers, threads=threads)


def _load(target: Path, providers: Sequence[str] | None, threads: int | None) -> OnnxRunner | None:
    """A session over the cached ``target``, or ``None`` when it is missing or unreadable."""
    if not target.is_file():
        return None
    try:
        runner = OnnxRunner(target, providers=providers, threads=threads)
    # onnxruntime raises its own exception types for a truncated or foreign file: exported again by the caller
    except Exception as exc:  # noqa: BLE001
        _log.warning("re-exporting unreadable cached ONNX model %s (%s)", target, exc)
        return None
    _touch(target)
    return runner


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (made when missing) while the block runs; no lock where
    ``fcntl`` is missing (the atomic rename alone keeps readers safe there: the export may run twice)."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _writable(folder: Path) -> bool:
    """Whether exports can be written into ``folder`` (made when missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def _touch(path: Path) -> None:
    """Mark a cached file as used (its mtime orders :func:`_prune`) when its mark is older than
    :data:`TOUCH_AFTER`: a file in steady use is not written at all; a read-only cache is fine."""
    try:
        if time.time() - path.stat().st_mtime > TOUCH_AFTER:
            os.utime(path)
    except OSError:
        pass


def _prune(folder: Path, name: str, *, keep: int) -> None:
    """Delete all but the ``keep`` most recently used exports of ``name`` (each weights file, training
    checkpoint or random test model adds one, 10 MB each for our models)."""
    def mtime(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:  # removed meanwhile by another process
            return 0.0

    files = sorted(folder.glob(f"{name}-*.onnx"), key=mtime, reverse=True)
    for old in files[keep:]:
        try:
            old.unlink()
        except OSError:
            pass
