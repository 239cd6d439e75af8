"""``vision.recognition_predictor()``: word/line crops of any size in, ``(text, confidence)`` out.

Pre-processing keeps each crop's aspect ratio (height 32, see :mod:`.preprocess`) and groups crops by
width into buckets (multiples of 32 px up to ``max_width``, by default the training width, 192): every
batch has one static width, which ``torch.compile`` specialises on (with ``pad_batches``, the batch
dimension is dynamic and rows are padded to a power of two, :func:`.preprocess.pad_rows`), and padding
stays under 32 columns per crop (the padded frames are also excluded from decoding). Crops wider than
``max_width`` are split into overlapping chunks whose per-frame outputs are stitched
(``vision.ops.ctc.stitch_frames``) before decoding, so long lines never get squeezed. Tall crops (vertical
text) are also read rotated by 90 degrees both ways and the most confident reading wins; unsure readings
are read again straightened by a shear (:mod:`.tilt`, slanted words in axis-aligned crops).

Resizing to height 32 runs where ``resize`` says: ``"host"`` (the CPU default: ``cv2`` in a thread pool, into
the batch's uint8 staging array) or ``"device"`` (the CUDA default, where host cores bound the call: 52.9k vs
33.9k crops/s with bf16 + compile on an H100, ``benchmarks/recognition.py``): the host copies each crop's raw
bytes into one flat buffer and the device resizes the batch with ``roi_align`` (:mod:`.device_resize`:
within a grey level of ``cv2``). A batch goes to the device in one copy, is padded, normalised, run and
CTC-decoded there, and comes back as one array of ids and one of confidences, made strings in one vectorised
step (:mod:`.batching`). Batches are pipelined: the pool stages the next ones while the device runs one. The
same code runs on every device, with the results of ``batch_crops`` + ``ctc_best_path`` (the tests check it).
"""

from __future__ import annotations

import contextlib
import copy
import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from vision.models._registry import default_model, get_model
from vision.ops.ctc import PackedPaths, ctc_best_path_packed
from vision.ops.transfer import to_device
from vision.predictors._device import onnx_runner, pick_device, place, registered_identity, wants_onnx
from vision.predictors.recognition.batching import (
    Plan,
    fill_batch,
    ids_to_strings,
    plan_batches,
    stitch_index,
)
from vision.predictors.recognition.device_resize import Packed, pack_batch, resize_packed
from vision.predictors.recognition.lexicon import Lexicon, load_lexicon
from vision.predictors.recognition.preprocess import (
    BUCKET,
    HEIGHT,
    MIN_ROWS,
    STRIDE,
    as_rgb_array,
    pad_batch,
    pad_rows,
    resize_to_height,
    resized_widths,
)
from vision.predictors.recognition.tilt import reread_slanted, reread_turned
from vision.predictors.remote import installed, remote_recognizer

__all__ = ["RecognitionPredictor", "recognition_predictor"]

_FILL_CHUNK = 128  # crops per pool job: a 1,024-crop batch is staged by 8 threads at once
LANES_DEFAULT = 2  # concurrent onnxruntime runs on the CPU path (see ``lanes`` in recognition_predictor)
_AHEAD = 3  # batches staged ahead of the one on the device (pinned staging memory: ~3 x 19 MB at most)


@dataclass
class _Batch:
    """A batch launched on the device; ``ids``/``confidence`` are host copies, complete once ``done`` is."""

    pieces: np.ndarray  # [n] piece indices (into the Plan)
    frames: np.ndarray  # [n] valid frames of each piece
    logits: torch.Tensor  # [n, T, C] float32 on the model's device
    ids: torch.Tensor  # [n, T] int16, host
    confidence: torch.Tensor  # [n] float32, host
    done: Any  # a torch.cuda.Event, or None where the copies are synchronous


class RecognitionPredictor:
    """Callable ``crops -> [(text, confidence), ...]`` in input order (see the module docstring)."""

    def __init__(self, model: nn.Module | Any, *, arch: str, device: torch.device, dtype: torch.dtype,
                 batch_size: int = 128, max_width: int = 192, overlap: int = 64, rotate_tall: bool = True,
                 pad_batches: bool = False, bucket: int = BUCKET, workers: int | None = None,
                 lexicon: Lexicon | None = None, resize: Literal["host", "device"] | None = None,
                 lanes: int = 1, min_rows: int = MIN_ROWS, slanted: bool = True) -> None:
        if lanes < 1 or min_rows < 1:
            raise ValueError(f"lanes and min_rows must be positive, got {lanes} and {min_rows}")
        if max_width % BUCKET or overlap % STRIDE or not 0 <= overlap < max_width or bucket % BUCKET:
            raise ValueError("max_width and bucket must be multiples of 32, overlap a multiple of 4 below max_width")
        resize = resize or ("device" if device.type == "cuda" else "host")
        if resize not in ("host", "device"):
            raise ValueError(f"resize must be 'host' or 'device', got {resize!r}")
        self.resize = resize
        self.model, self.arch, self.device, self.dtype = model, arch, device, dtype
        self.batch_size, self.max_width, self.overlap = batch_size, max_width, overlap
        self.rotate_tall, self.pad_batches, self.bucket = rotate_tall, pad_batches, bucket
        self.workers = workers or min(8, os.cpu_count() or 1)
        self.lexicon, self.lanes, self.min_rows, self.slanted = lexicon, lanes, min_rows, slanted
        self._pool: ThreadPoolExecutor | None = None
        self._lane_pool: ThreadPoolExecutor | None = None
        self._cuda = device.type == "cuda"
        self._spare: dict[tuple[int, ...], list[torch.Tensor]] = {}  # CPU staging buffers to reuse, by shape
        self._side: torch.cuda.Stream | None = None  # for lexicon look-ups while the device works on
        self.remote: Any = None  # the model step in a model server (vision.predictors.remote)

    # -- public ------------------------------------------------------------------------------------------
    def with_lexicon(self, lexicon: Lexicon | None) -> RecognitionPredictor:
        """A predictor sharing this one's model (and session) that decodes with ``lexicon`` (``lang``)."""
        other = copy.copy(self)
        other.lexicon, other._pool, other._lane_pool, other._spare = lexicon, None, None, {}
        return other

    def __call__(self, crops: Sequence[Any]) -> list[tuple[str, float]]:
        if isinstance(crops, (np.ndarray, torch.Tensor)) and crops.ndim == 3:
            raise ValueError("pass a list of crops (a single HxWxC array is ambiguous)")
        arrays = [as_rgb_array(c, i) for i, c in enumerate(crops)]
        sizes = np.array([a.shape[:2] for a in arrays], np.int64).reshape(-1, 2)  # [N, (h, w)]
        results = reread_turned(self._read, arrays, self._read(arrays, sizes), self.is_tall(sizes))
        return self.reread_slanted(arrays, results) if self.slanted else results

    def reread_slanted(self, crops: Sequence[np.ndarray], results: list[tuple[str, float]]
                       ) -> list[tuple[str, float]]:
        """``results`` of the RGB ``crops`` with unsure slanted words read again sheared (:mod:`.tilt`); ``__call__``
        does it with ``slanted=True``, the OCR pipeline on photos only."""
        return reread_slanted(self._read, crops, results)

    def is_tall(self, sizes: np.ndarray) -> np.ndarray:
        """``bool[N]``: crops of ``sizes`` (``[N, (h, w)]`` pixels) also read turned by 90 degrees both ways
        (vertical text), the most confident reading winning."""
        sizes = np.asarray(sizes).reshape(-1, 2)
        if not self.rotate_tall:
            return np.zeros(len(sizes), dtype=bool)
        return (sizes[:, 0] > 1.5 * sizes[:, 1]) & (sizes[:, 0] >= 24)

    def is_split(self, sizes: np.ndarray) -> np.ndarray:
        """``bool[N]``: crops of ``sizes`` (``[N, (h, w)]``) wider than ``max_width`` once resized, read as
        overlapping chunks whose frames are stitched."""
        return resized_widths(np.maximum(np.asarray(sizes).reshape(-1, 2), 1)) > self.max_width

    @torch.inference_mode()
    def read_batch(self, x: torch.Tensor, widths: np.ndarray) -> tuple[list[str], np.ndarray]:
        """Read a batch cut and padded elsewhere (the page pipeline cuts crops on the device): ``x``
        (``[n, 3, HEIGHT, W]`` float crops with uint8 values, on the model's device, none split or tall:
        :meth:`is_split`, :meth:`is_tall`) padded past ``widths`` (``int[n]``) -> texts (lexicon applied)
        and ``float[n]`` confidences, as ``__call__`` gives them."""
        frames = -(-np.asarray(widths) // STRIDE)
        logits, ids, confidence = self._run(x, frames)
        if logits.device.type == "cuda":
            torch.cuda.current_stream(logits.device).synchronize()
        texts = self._strings(logits, ids, frames, np.ones(len(frames), dtype=bool))
        return texts.tolist(), confidence.numpy()

    # -- steps ---------------------------------------------------------------------------------------------
    @torch.inference_mode()
    def _read(self, arrays: list[np.ndarray], sizes: np.ndarray | None = None) -> list[tuple[str, float]]:
        if not arrays:
            return []
        if sizes is None:
            sizes = np.array([a.shape[:2] for a in arrays], np.int64)
        resized = resized_widths(sizes)
        plan = plan_batches(resized, max_width=self.max_width, overlap=self.overlap, bucket=self.bucket,
                            batch_size=self.batch_size)
        if self.resize == "device":
            stage = partial(self._pack, arrays, sizes, resized, plan)
        else:
            split = np.unique(plan.owner[plan.split]).tolist()
            wide = {o: self._submit(resize_to_height, arrays[o]) for o in split}
            stage = partial(self._stage, arrays, plan, wide)
        texts = np.full(len(arrays), "", dtype=object)
        confs = np.zeros(len(arrays))
        split_rows: list[tuple[torch.Tensor, np.ndarray]] = []  # (batch logits, rows of chunks of split crops)
        split_pieces: list[np.ndarray] = []
        for batch in self._batches(plan, stage):
            if batch.done is not None:
                batch.done.synchronize()
            whole = ~plan.split[batch.pieces]
            read = self._strings(batch.logits, batch.ids, batch.frames, whole)
            texts[plan.owner[batch.pieces[whole]]] = read[whole]
            confs[plan.owner[batch.pieces[whole]]] = batch.confidence.numpy()[whole]
            if not whole.all():
                split_rows.append((batch.logits, np.flatnonzero(~whole)))
                split_pieces.append(batch.pieces[~whole])
        if split_rows:
            self._read_split(plan, split_rows, np.concatenate(split_pieces), texts, confs)
        return list(zip(texts.tolist(), confs.tolist()))

    def _read_split(self, plan: Plan, rows: list[tuple[torch.Tensor, np.ndarray]], pieces: np.ndarray,
                    texts: np.ndarray, confs: np.ndarray) -> None:
        """Stitch the chunks of every split crop (``pieces``: the chunks at ``rows`` of batch logits) with one
        gather, decode them as one batch and write their readings into ``texts``/``confs``."""
        owners, flat, lengths = stitch_index(plan, pieces, rows[0][0].shape[1])
        paths = self._decode_stitched(rows, flat, lengths)
        texts[owners] = np.array(ids_to_strings(paths.ids.cpu().numpy()), dtype=object)
        confs[owners] = paths.confidence.cpu().numpy()

    def _batches(self, plan: Plan, stage: Any) -> Iterator[_Batch]:
        """Stage batches ahead in the pool (``stage(batch)``: :meth:`_stage` or :meth:`_pack`), launch each
        on the device, and yield batch ``k`` once batch ``k + 1`` is queued behind it (so the device keeps
        working while the caller reads ``k``)."""
        staged: deque[tuple[np.ndarray, torch.Tensor | Future, list[Future]]] = deque()
        queued, previous = 0, None
        launch = self._launch
        if self.lanes > 1:  # each launch runs the model in its own thread (see ``lanes`` in the factory)
            self._lane_pool = self._lane_pool or ThreadPoolExecutor(self.lanes, thread_name_prefix="recognition-lane")
            launch = partial(self._lane_pool.submit, self._launch)
        for _ in plan.batches:
            while queued < len(plan.batches) and len(staged) < _AHEAD:
                staged.append(stage(plan.batches[queued]))
                queued += 1
            pieces, buffer, jobs = staged.popleft()
            for job in jobs:
                job.result()
            if isinstance(buffer, Future):
                buffer = buffer.result()
            current = launch(buffer, pieces, plan)
            if previous is not None:
                yield previous.result() if isinstance(previous, Future) else previous
            previous = current
        if previous is not None:
            yield previous.result() if isinstance(previous, Future) else previous

    def _submit(self, fn: Any, *args: Any) -> Future:
        """``fn(*args)`` in the pool (started on first use), or at once when ``workers`` is 1."""
        if self.workers > 1:
            self._pool = self._pool or ThreadPoolExecutor(self.workers, thread_name_prefix="recognition")
            return self._pool.submit(fn, *args)
        done: Future = Future()
        done.set_result(fn(*args))
        return done

    def _stage(self, arrays: list[np.ndarray], plan: Plan, wide: dict[int, Future],
               batch: tuple[int, np.ndarray]) -> tuple[np.ndarray, torch.Tensor, list[Future]]:
        """Allocate a batch's ``[n, 32, W, 3]`` uint8 staging tensor (pinned on CUDA: torch's caching host
        allocator reuses it once its copy is done) and fill it in pool jobs of ``_FILL_CHUNK`` crops."""
        width, pieces = batch
        shape = (len(pieces), HEIGHT, width, 3)
        spare = self._spare.get(shape)
        buffer = spare.pop() if spare else torch.empty(shape, dtype=torch.uint8, pin_memory=self._cuda)
        out = buffer.numpy()
        return pieces, buffer, [
            self._submit(fill_batch, out[a:a + _FILL_CHUNK], arrays, plan, pieces[a:a + _FILL_CHUNK], wide)
            for a in range(0, len(pieces), _FILL_CHUNK)]

    def _pack(self, arrays: list[np.ndarray], sizes: np.ndarray, resized: np.ndarray, plan: Plan,
              batch: tuple[int, np.ndarray]) -> tuple[np.ndarray, Future, list[Future]]:
        """Pack a batch's raw crops for the device resize (:func:`.device_resize.pack_batch`) in the pool."""
        width, pieces = batch
        return pieces, self._submit(pack_batch, arrays, sizes, resized, plan, pieces, width, self._cuda), []

    def _launch(self, buffer: torch.Tensor | Packed, pieces: np.ndarray, plan: Plan) -> _Batch:
        """Queue copy, padding, model and decoding of one staged batch on the device (no host sync on CUDA)."""
        frames = -(-plan.width[pieces] // STRIDE)  # frames before the padding
        logits, ids, confidence = self._forward(buffer, plan.width[pieces], frames)
        if self.device.type == "cpu" and isinstance(buffer, torch.Tensor):  # done with it: reuse it
            self._spare.setdefault(tuple(buffer.shape), []).append(buffer)
        done = None
        if logits.device.type == "cuda":
            done = torch.cuda.Event()
            done.record(torch.cuda.current_stream(logits.device))
        return _Batch(pieces, frames, logits, ids, confidence, done)

    # The three methods below hold all the device work (benchmarks/recognition.py --host-profile times them).
    def _forward(self, buffer: torch.Tensor | Packed, widths: np.ndarray, frames: np.ndarray
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Resize (a :class:`Packed` batch), pad, normalise, run and decode a staged ``[n, 32, W, 3]`` uint8
        batch. Returns the logits ``[n, T, C]`` (float32, on the model's device) and host copies (asynchronous
        on CUDA) of the packed ids ``[n, T]`` (int16) and confidences ``[n]``."""
        if self.remote is not None:
            return self.remote(buffer, widths, frames)
        n = len(widths)
        if isinstance(buffer, Packed):
            flat = buffer.flat.to(self.device, non_blocking=True)
            meta = to_device(buffer.meta, self.device)
            x = resize_packed(flat, meta, buffer.groups, height=HEIGHT, out_width=buffer.width)
        else:
            x = buffer.to(self.device, non_blocking=True)
        return self._run(pad_batch(x, to_device(widths, self.device)), frames)

    def _run(self, x: torch.Tensor, frames: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Run the model on ``x`` (``[n, 3, HEIGHT, W]`` with uint8 values, on the device) and CTC-decode
        ``frames[n]`` valid frames of each row: the one place where recognition meets the model."""
        n = x.shape[0]
        if self.pad_batches:  # compiled models: one graph per bucket, batch dimension dynamic
            x = pad_rows(x, self.batch_size, self.min_rows)
        logits = self.model(x.to(self.dtype if self.dtype.is_floating_point else torch.float32) / 255)
        logits = torch.as_tensor(logits)[:n].float()
        paths = ctc_best_path_packed(logits, lengths=to_device(frames, logits.device))
        return (logits, paths.ids.to(torch.int16).to("cpu", non_blocking=True),
                paths.confidence.to("cpu", non_blocking=True))

    def _decode_stitched(self, rows: list[tuple[torch.Tensor, np.ndarray]], flat: np.ndarray,
                         lengths: np.ndarray) -> PackedPaths:
        """Best paths of the sequences made of frames ``flat`` (``[M, L]`` indices into the chosen ``rows`` of
        batch logits, stacked to ``[S, T, C]`` and flattened to ``[S * T, C]``), ``lengths`` (``[M]``) long."""
        device = rows[0][0].device
        chunks = torch.cat([logits.index_select(0, to_device(r, device)) for logits, r in rows])
        seqs = chunks.flatten(0, 1)[to_device(flat, device)]  # [M, L, C]
        return ctc_best_path_packed(seqs, lengths=to_device(lengths, device))

    def _log_probs(self, logits: torch.Tensor, rows: list[int]) -> torch.Tensor:
        """Host ``[k, T, C]`` log-softmax frames of a few ``rows`` of a finished batch's ``logits`` (on a side
        stream on CUDA: the batches queued behind it are not waited for)."""
        side = contextlib.nullcontext()
        if logits.device.type == "cuda":
            self._side = self._side or torch.cuda.Stream(logits.device)
            side = torch.cuda.stream(self._side)
        with side:
            return logits[rows].log_softmax(-1).cpu()

    def _strings(self, logits: torch.Tensor, ids: torch.Tensor, frames: np.ndarray, check: np.ndarray
                 ) -> np.ndarray:
        """Strings of a decoded batch (``ids [n, T]`` host int16), the lexicon correcting the rows ``check``
        (``bool[n]``) that need it; only their frames are fetched from the device."""
        read = np.array(ids_to_strings(ids.numpy()), dtype=object)
        if self.lexicon is None:
            return read
        need = [j for j in np.flatnonzero(check).tolist() if self.lexicon.needs_check(read[j])]
        if need:
            log_probs = self._log_probs(logits, need)
            for k, j in enumerate(need):
                read[j] = self.lexicon.correct(read[j], log_probs[k, :frames[j]])
        return read

def recognition_predictor(arch: str | None = None, *, weights: str | Path | None = "default",
                          device: str | torch.device | None = None, dtype: torch.dtype | None = None,
                          batch_size: int = 128, compile: bool = False, onnx: bool | None = None,
                          lexicon: str | Lexicon | None = "en", channels_last: bool | None = None,
                          lanes: int | None = None, lang: str | None = None,
                          cuda_graphs: bool | None = None, **options: Any) -> RecognitionPredictor:
    """Build a recognizer ready to read crops, offline (shipped weights).

    Args:
        arch: a registered model (``vision.models.list_models("recognition")``); ``None``: the default.
        weights: ``"default"`` (shipped file), a safetensors path, or ``None`` (random; for tests).
        device: ``"cpu"``, ``"cuda"``...; default cuda when available.
        dtype: ``torch.float32`` (default) or ``torch.bfloat16`` (see ``vision.fast.precision``).
        batch_size: crops per forward pass (within one width bucket).
        compile: wrap the model with ``torch.compile`` (``vision.fast.compile``). Compiled and CUDA models
            get batches padded to a power of two of rows (``min_rows`` to ``batch_size``) with a dynamic
            batch dimension (:func:`.preprocess.pad_rows`, option ``pad_batches``), so each width bucket is
            one graph and cuDNN picks kernels for a bounded set of shapes, whatever the crops.
        onnx: run the model with onnxruntime (:func:`vision.fast.onnx.cached_runner`, exported once per
            weights; about 3x faster than eager PyTorch on our 2-core CPU, measured by
            ``benchmarks/recognition.py``). ``None``: on CPU in float32 without ``compile`` when onnxruntime
            is installed; ``False``: eager PyTorch.
        lexicon: lexicon-aware decoding (:mod:`vision.predictors.recognition.lexicon`): a bundled lexicon's name
            (``"en"``, the default), a word-list path, a :class:`Lexicon`, or ``None`` for plain greedy
            decoding.
        channels_last: run the PyTorch model's convolutions in NHWC (:mod:`vision.fast.memory_format`); ``None``:
            NCHW (each new width bucket costs seconds in NHWC on CUDA).
        lanes: batches run at once through the onnxruntime session, each on ``threads / lanes`` intra-op
            threads (onnxruntime sessions take concurrent runs). Small recognizer batches use two cores
            better as two single-threaded runs than as one two-threaded one (FUNSD pages 1.1-1.3x faster on
            our 2-core CPU). ``None``: :data:`LANES_DEFAULT` (2) on the CPU, capped by the thread count; 1 on
            CUDA and for eager PyTorch.
        lang: the document's languages (``"de"``, ``"de+fr"``; :mod:`.languages`): their lexicons replace the
            default English one (unless ``lexicon`` names another), and a language-specific model is used
            when one ships.
        cuda_graphs: replay the eager model from CUDA graphs (:mod:`vision.fast.cuda_graphs`); None: on CUDA.
        options: forwarded to :class:`RecognitionPredictor` (``max_width``, ``overlap``, ``rotate_tall``, ``slanted``,
            ``resize``: ``"host"`` (CPU default) or ``"device"`` (CUDA default), see the module docstring)...
    """
    if lang:
        from vision.predictors.recognition.languages import lexicon_for, recognizer_for

        arch = recognizer_for(lang, arch)
        lexicon = lexicon_for(lang) if lexicon == "en" else lexicon
    arch = arch or default_model("recognition")
    if lexicon is not None:
        options["lexicon"] = lexicon if isinstance(lexicon, Lexicon) else load_lexicon(str(lexicon))
    dev = pick_device(device)
    dtype = dtype or torch.float32
    if (client := installed()) is not None and client.serves(dev):  # the model runs in a model server
        return remote_recognizer(client, arch, batch_size, options, weights=weights and str(weights),
                                 dtype=dtype, compile=compile, cuda_graphs=cuda_graphs, channels_last=channels_last)
    network = cache(lambda: get_model(arch, weights=weights).eval())  # built once, if at all
    if wants_onnx(onnx, dev, dtype, compile=compile):
        threads = torch.get_num_threads()
        n_lanes = max(1, min(lanes or LANES_DEFAULT, threads)) if dev.type == "cpu" else 1
        runner = onnx_runner(network, torch.rand(2, 3, 32, 96), name=arch, device=dev, required=bool(onnx),
                             threads=max(1, threads // n_lanes), identity=registered_identity(arch, weights))
        if runner is not None:
            return RecognitionPredictor(runner, arch=arch, device=dev, dtype=dtype, batch_size=batch_size,
                                        lanes=n_lanes, **options)
    model, _ = place(network(), dev, dtype, channels_last=channels_last, compile=compile,
                     cuda_graphs=cuda_graphs)
    # Bounded shapes (cuDNN plans, CUDA graphs, compiled graphs): 6 widths x 2 row counts (see pad_rows).
    options.setdefault("pad_batches", compile or dev.type == "cuda")
    return RecognitionPredictor(model, arch=arch, device=dev, dtype=dtype, batch_size=batch_size, **options)
