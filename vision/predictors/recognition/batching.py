"""Host side of the recognition predictor's batches: which piece of which crop goes in which batch, filling a
batch's uint8 staging array, and turning decoded id rows into strings.

Kept per crop: one ``cv2.resize`` straight into the staging array (OpenCV releases the GIL, so pool threads
resize in parallel) and nothing else (with ``resize="device"``, not even that: crops are packed raw by
:func:`~vision.predictors.recognition.device_resize.pack_batch` and resized on the device); padding, normalisation and CTC decoding run on the model's device
(:func:`~vision.predictors.recognition.preprocess.pad_batch`, :func:`~vision.ops.ctc.ctc_best_path_packed`) and
strings are built for a whole batch at once (:func:`ids_to_strings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from vision.predictors.recognition.preprocess import STRIDE, resize_to_height
from vision.models.recognition.vocab import VOCAB
from vision.ops.ctc import stitch_spans

__all__ = ["Plan", "fill_batch", "ids_to_strings", "plan_batches", "stitch_index"]

_LUT = np.array(["", *VOCAB], dtype="<U1")  # class id -> character; the blank (0) is "\0", dropped by numpy


@dataclass(frozen=True)
class Plan:
    """The model inputs of one call: pieces (whole crops, or overlapping chunks of crops wider than the model's
    maximum width), and batches of piece indices that share one bucket width.

    Attributes:
        owner: ``[P]`` the crop each piece comes from (pieces are in crop order, a crop's chunks left to right).
        start: ``[P]`` the piece's first column in its resized crop (a multiple of ``STRIDE``).
        width: ``[P]`` the piece's columns.
        split: ``[P]`` whether the piece is one of several chunks of its crop.
        batches: ``(bucket width, piece indices)`` in run order: narrowest bucket first, piece order within.
    """

    owner: np.ndarray
    start: np.ndarray
    width: np.ndarray
    split: np.ndarray
    batches: list[tuple[int, np.ndarray]]


def plan_batches(widths: np.ndarray, *, max_width: int, overlap: int, bucket: int, batch_size: int) -> Plan:
    """Cut crops of resized ``widths`` (``[N]``) into pieces of at most ``max_width`` columns overlapping by at
    least ``overlap`` (the last chunk ends at the crop's end, its start rounded up to a frame boundary), and
    group the pieces into batches of ``batch_size`` by bucket width (next multiple of ``bucket``)."""
    widths = np.asarray(widths, dtype=np.int64)
    counts = np.ones(len(widths), np.int64)
    chunks: dict[int, list[int]] = {}
    for i in np.flatnonzero(widths > max_width).tolist():  # rare: long lines
        w = int(widths[i])
        starts = list(range(0, w - max_width, max_width - overlap)) + [w - max_width]
        starts[-1] = -(-starts[-1] // STRIDE) * STRIDE
        chunks[i], counts[i] = starts, len(starts)
    owner = np.repeat(np.arange(len(widths)), counts)
    start = np.zeros(len(owner), np.int64)
    first = np.cumsum(counts) - counts  # index of each crop's first piece
    for i, starts in chunks.items():
        start[first[i]:first[i] + len(starts)] = starts
    split = counts[owner] > 1
    width = np.minimum(widths[owner] - start, max_width)
    padded = np.minimum(np.maximum(bucket, -(-width // bucket) * bucket), max_width)
    order = np.argsort(padded, kind="stable")
    batches = []
    for w in np.unique(padded).tolist():
        idx = order[padded[order] == w]
        batches += [(w, idx[b:b + batch_size]) for b in range(0, len(idx), batch_size)]
    return Plan(owner, start, width, split, batches)


def fill_batch(out: np.ndarray, arrays: Sequence[np.ndarray], plan: Plan, pieces: np.ndarray,
               wide: Mapping[int, Future[np.ndarray]]) -> None:
    """Write ``pieces`` into ``out`` (``[n, 32, W, 3]`` uint8): piece ``j`` in ``out[j, :, :width]``, the columns
    after it left as they are (the device pads them). Crops are resized on the fly; ``wide`` holds the
    resized crops that are split in chunks (resized once each, possibly still in a pool)."""
    for j, (o, s, w) in enumerate(zip(plan.owner[pieces].tolist(), plan.start[pieces].tolist(),
                                      plan.width[pieces].tolist())):
        src = wide.get(o)
        if src is None:
            resize_to_height(arrays[o], out=out[j, :, :w])
        else:
            out[j, :, :w] = src.result()[:, s:s + w]


def ids_to_strings(ids: np.ndarray) -> list[str]:
    """Rows of left-packed class ids (``[N, T]`` integers, blank 0 after the last character) -> ``N`` strings:
    one table look-up and one fixed-width view for the whole batch, no per-character Python."""
    n, t = ids.shape
    if t == 0:
        return [""] * n
    return np.ascontiguousarray(_LUT[ids]).view(f"<U{t}").reshape(n).tolist()


def stitch_index(plan: Plan, pieces: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the frames of each split crop come from, for one gather on the device.

    Args:
        plan: the call's plan.
        pieces: ``[S]`` every split piece of ``plan``, in the order of the rows of a ``[S, t, C]`` logits tensor.
        t: frames per row.

    Returns:
        The split crops ``[M]``, ``[M, L]`` indices into the rows flattened to ``[S * t, C]`` (0 past a crop's
        end), and ``[M]`` stitched lengths; each crop's frames are chosen as
        :func:`~vision.ops.ctc.stitch_frames` chooses them.
    """
    row_of = np.empty(len(plan.owner), np.int64)
    row_of[pieces] = np.arange(len(pieces))
    split = np.flatnonzero(plan.split)  # a crop's chunks are consecutive pieces
    owners, first, count = np.unique(plan.owner[split], return_index=True, return_counts=True)
    frames = -(-plan.width // STRIDE)
    index = []
    for a, c in zip(first.tolist(), count.tolist()):
        parts = split[a:a + c]
        spans = stitch_spans(frames[parts].tolist(), (plan.start[parts] // STRIDE).tolist())
        index.append(np.concatenate([row_of[p] * t + np.arange(b, e) for p, (b, e) in zip(parts, spans)]))
    lengths = np.array([len(i) for i in index], np.int64)
    flat = np.zeros((len(index), lengths.max()), np.int64)
    for k, i in enumerate(index):
        flat[k, :len(i)] = i
    return owners, flat, lengths
