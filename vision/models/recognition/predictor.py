"""``vision.recognition_predictor()``: word/line crops of any size in, ``(text, confidence)`` out.

Pre-processing keeps each crop's aspect ratio (height 32, see :mod:`.preprocess`) and groups crops by
width into buckets (multiples of 32 px up to ``max_width``, by default the training width, 192): every batch has one static shape, which
``torch.compile`` specialises on, and padding stays under 32 columns per crop (the padded frames are
also excluded from decoding). Crops wider than ``max_width`` are split into overlapping chunks whose
per-frame outputs are stitched (``vision.ops.ctc.stitch_frames``) before decoding, so long lines never get
squeezed. Tall crops (vertical text) are also read rotated by 90 degrees both ways and the most
confident reading wins.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from vision.models._registry import default_model, get_model
from vision.models.recognition.lexicon import Lexicon, load_lexicon
from vision.models.recognition.preprocess import (
    BUCKET,
    STRIDE,
    as_rgb_array,
    batch_crops,
    bucket_width,
    resize_to_height,
)
from vision.models.recognition.vocab import VOCAB
from vision.ops.ctc import CTCPath, ctc_best_path, stitch_frames

__all__ = ["RecognitionPredictor", "recognition_predictor"]

_CHARS = np.array(["", *VOCAB], dtype=object)  # class id -> character (0 = blank -> "")


@dataclass
class _Piece:
    """One model input: a (chunk of a) resized crop, the crop it belongs to and its start frame."""

    image: np.ndarray
    owner: int
    start: int


class RecognitionPredictor:
    """Callable ``crops -> [(text, confidence), ...]`` in input order (see the module docstring)."""

    def __init__(self, model: nn.Module | Any, *, arch: str, device: torch.device, dtype: torch.dtype,
                 batch_size: int = 128, max_width: int = 192, overlap: int = 64, rotate_tall: bool = True,
                 pad_batches: bool = False, bucket: int = BUCKET, workers: int | None = None,
                 lexicon: Lexicon | None = None) -> None:
        if max_width % BUCKET or overlap % STRIDE or not 0 <= overlap < max_width or bucket % BUCKET:
            raise ValueError("max_width and bucket must be multiples of 32, overlap a multiple of 4 below max_width")
        self.model, self.arch, self.device, self.dtype = model, arch, device, dtype
        self.batch_size, self.max_width, self.overlap = batch_size, max_width, overlap
        self.rotate_tall, self.pad_batches, self.bucket = rotate_tall, pad_batches, bucket
        self.workers = workers or min(8, os.cpu_count() or 1)
        self.lexicon = lexicon

    # -- public ------------------------------------------------------------------------------------------
    def __call__(self, crops: Sequence[Any]) -> list[tuple[str, float]]:
        if isinstance(crops, (np.ndarray, torch.Tensor)) and crops.ndim == 3:
            raise ValueError("pass a list of crops (a single HxWxC array is ambiguous)")
        arrays = [as_rgb_array(c, i) for i, c in enumerate(crops)]
        results = self._read(arrays)
        if self.rotate_tall:
            tall = [i for i, a in enumerate(arrays) if a.shape[0] > 1.5 * a.shape[1] and a.shape[0] >= 24]
            if tall:
                for k in (1, 3):  # 90 degrees counter-clockwise, then clockwise
                    rotated = self._read([np.ascontiguousarray(np.rot90(arrays[i], k)) for i in tall])
                    for i, (text, conf) in zip(tall, rotated):
                        upright = results[i][1] if len(results[i][0]) >= 2 else 0.0  # blank: no evidence
                        if len(text) >= 3 and conf > upright + 0.1:
                            results[i] = (text, conf)
        return results

    # -- steps ---------------------------------------------------------------------------------------------
    def _read(self, arrays: list[np.ndarray]) -> list[tuple[str, float]]:
        if not arrays:
            return []
        if len(arrays) >= 256 and self.workers > 1:  # cv2 releases the GIL: resize in threads
            with ThreadPoolExecutor(self.workers) as pool:
                resized = list(pool.map(resize_to_height, arrays, chunksize=64))
        else:
            resized = [resize_to_height(a) for a in arrays]
        pieces = self._split(resized)
        split = {p.owner for p in pieces if p.start > 0}
        paths, frames, fixed = self._run(pieces, keep={i for i, p in enumerate(pieces) if p.owner in split})
        out: list[tuple[str, float]] = [("", 0.0)] * len(arrays)
        per_crop: dict[int, list[tuple[int, torch.Tensor]]] = {}
        for i, piece in enumerate(pieces):
            if piece.owner in split:
                per_crop.setdefault(piece.owner, []).append((piece.start, frames[i]))
            else:
                text, conf = _text(paths[i])
                out[piece.owner] = (fixed.get(i, text), conf)
        for owner, parts in per_crop.items():
            seq = stitch_frames([f for _, f in parts], [s for s, _ in parts])
            out[owner] = _text(ctc_best_path(seq[None])[0])
        return out

    def _split(self, resized: list[np.ndarray]) -> list[_Piece]:
        pieces = []
        step = self.max_width - self.overlap
        for owner, img in enumerate(resized):
            w = img.shape[1]
            if w <= self.max_width:
                pieces.append(_Piece(img, owner, 0))
                continue
            starts = list(range(0, w - self.max_width, step)) + [w - self.max_width]
            starts[-1] = -(-starts[-1] // STRIDE) * STRIDE if starts[-1] % STRIDE else starts[-1]
            for s in starts:
                pieces.append(_Piece(img[:, s:s + self.max_width], owner, s // STRIDE))
        return pieces

    @torch.inference_mode()
    def _run(self, pieces: list[_Piece], keep: set[int]
             ) -> tuple[list[CTCPath | None], dict[int, torch.Tensor], dict[int, str]]:
        """Run the model bucket by bucket; decode each piece, keep the frames ``[T, C]`` of ``keep``, and
        return the lexicon's corrections of whole crops (piece index -> text) when a lexicon is set."""
        buckets: dict[int, list[int]] = {}
        for i, p in enumerate(pieces):
            buckets.setdefault(min(bucket_width(p.image.shape[1], self.bucket), self.max_width), []).append(i)
        paths: list[CTCPath | None] = [None] * len(pieces)
        frames: dict[int, torch.Tensor] = {}
        fixed: dict[int, str] = {}
        for width, idx in sorted(buckets.items()):
            for b in range(0, len(idx), self.batch_size):
                chunk = idx[b:b + self.batch_size]
                images = [pieces[i].image for i in chunk]
                if self.pad_batches and len(images) < self.batch_size:  # one static shape for compiled models
                    images += [images[-1]] * (self.batch_size - len(images))
                x = batch_crops(images, width).to(self.device, non_blocking=True)
                logits = self.model(x.to(self.dtype if self.dtype.is_floating_point else torch.float32) / 255)
                logits = torch.as_tensor(logits)[:len(chunk)].float()
                valid = [-(-pieces[i].image.shape[1] // STRIDE) for i in chunk]  # frames before the padding
                for i, path in zip(chunk, ctc_best_path(logits, lengths=valid)):
                    paths[i] = path
                for j, i in enumerate(chunk):
                    if i in keep:
                        frames[i] = logits[j, :valid[j]].cpu()
                    elif self.lexicon is not None and self.lexicon.needs_check(text := _text(paths[i])[0]):
                        fixed[i] = self.lexicon.correct(text, logits[j, :valid[j]].log_softmax(-1))
        return paths, frames, fixed


def _text(path: CTCPath | None) -> tuple[str, float]:
    if path is None:
        return "", 0.0
    return "".join(_CHARS[path.ids]) if path.ids else "", float(path.confidence)


def _pick_device(device: str | torch.device | None) -> torch.device:
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def recognition_predictor(arch: str | None = None, *, weights: str | Path | None = "default",
                          device: str | torch.device | None = None, dtype: torch.dtype | None = None,
                          batch_size: int = 128, compile: bool = False, onnx: bool | None = None,
                          lexicon: str | Lexicon | None = "en", **options: Any) -> RecognitionPredictor:
    """Build a recognizer ready to read crops, offline (shipped weights).

    Args:
        arch: a registered recognition model (``vision.models.list_models("recognition")``); default: the
            CPU default ``crnn_mobilenet_small``.
        weights: ``"default"`` (shipped file), a safetensors path, or ``None`` (random; for tests).
        device: ``"cpu"``, ``"cuda"``...; default cuda when available.
        dtype: ``torch.float32`` (default) or ``torch.bfloat16`` (see ``vision.fast.precision``).
        batch_size: crops per forward pass (within one width bucket).
        compile: wrap the model with ``torch.compile`` (``vision.fast.compile``); batches are then padded to
            ``batch_size`` so each width bucket is one static shape.
        onnx: run the model with onnxruntime (:func:`vision.fast.onnx.cached_runner`, exported once per
            weights; about 3x faster than eager PyTorch on our 2-core CPU, measured by
            ``benchmarks/recognition.py``). ``None``: on CPU in float32 without ``compile`` when onnxruntime
            is installed; ``False``: eager PyTorch.
        lexicon: lexicon-aware decoding (:mod:`vision.models.recognition.lexicon`): a bundled lexicon's name
            (``"en"``, the default), a word-list path, a :class:`Lexicon`, or ``None`` for plain greedy
            decoding.
        options: forwarded to :class:`RecognitionPredictor` (``max_width``, ``overlap``, ``rotate_tall``...).
    """
    arch = arch or default_model("recognition")
    if lexicon is not None:
        options["lexicon"] = lexicon if isinstance(lexicon, Lexicon) else load_lexicon(str(lexicon))
    dev = _pick_device(device)
    dtype = dtype or torch.float32
    model = get_model(arch, weights=weights).eval()
    if onnx and (dtype != torch.float32 or compile):
        raise ValueError("onnx=True runs the float32 export: it excludes compile and other dtypes")
    if onnx or (onnx is None and dev.type == "cpu" and dtype == torch.float32 and not compile):
        runner = _onnx_runner(model, dev, arch, required=bool(onnx))
        if runner is not None:
            return RecognitionPredictor(runner, arch=arch, device=dev, dtype=dtype, batch_size=batch_size,
                                        **options)
    model = model.to(dev)
    if dtype != torch.float32:
        from vision.fast.precision import to_dtype

        model = to_dtype(model, dtype)
    if compile:
        from vision.fast.compile import compile_model

        model = compile_model(model)
        options.setdefault("pad_batches", True)
    return RecognitionPredictor(model, arch=arch, device=dev, dtype=dtype, batch_size=batch_size, **options)


def _onnx_runner(model: nn.Module, device: torch.device, arch: str, *, required: bool) -> Any:
    """The cached ONNX export of ``model`` (dynamic batch and width) in an onnxruntime session.

    When not ``required`` (the CPU default), a missing onnxruntime or a failed export gives ``None`` (with
    a warning for the latter) and the caller runs eager PyTorch.
    """
    from vision.fast.onnx import cached_runner, onnx_available

    if not required and not onnx_available():
        return None
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device.type == "cuda" else None
    try:
        return cached_runner(model, torch.rand(2, 3, 32, 96), name=arch, threads=torch.get_num_threads(),
                             providers=providers)
    except Exception as exc:
        if required:
            raise
        warnings.warn(f"ONNX export of {arch} failed ({exc}); running eager PyTorch", stacklevel=3)
        return None
