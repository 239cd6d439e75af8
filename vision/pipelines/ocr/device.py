"""Crop and recognise on the recognizer's device: the ``crop`` + ``recognize`` stages for GPU pipelines.

The host path cuts numpy crops and lets the recognition predictor resize, pad and decode them one by one.
Here each page is uploaded once (uint8, :func:`device_page`, shared with a detector that fits pages on the
same device), and the crops of all same-size pages of a batch are cut *and*
resized to the recognizer's height in one kernel per width bucket (:func:`~vision.ops.crops.roi_crops`
with the page as batch index; quads by :func:`~vision.ops.crops.warp_crops`, one call per page), padded
with their own paper colour (per-crop median of the border, as
:func:`vision.predictors.recognition.preprocess.pad_color` does on the host) in one pass per bucket, and the
logits of a whole batch are decoded at once by the predictor (:meth:`read_batch`). Host-device syncs: one copy per
recognition batch (the decoded paths), plus one for the batches where the lexicon checks words; widths and
frame counts come from host-side box coordinates.

Crops the host path treats specially go through the predictor unchanged: crops wider than its
``max_width`` once resized (split into overlapping chunks there) and tall crops (read turned by 90 degrees
there). On photos, unsure readings of slanted words are read again from host crops
(:mod:`vision.predictors.recognition.tilt`), as the host path reads them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from vision.ops.boxes import pixel_boxes
from vision.ops.crops import box_crops, polygon_crops, polygon_sizes, roi_crops, warp_crops
from vision.ops.transfer import to_device
from vision.pipelines.base import PageState
from vision.predictors.recognition.preprocess import BUCKET, HEIGHT
from vision.predictors.recognition.tilt import BELOW

__all__ = ["DeviceRecognizeStage", "device_batches", "device_page"]


def _paper_fill(crops: Tensor, widths: Tensor) -> Tensor:
    """NaN padding of ``crops [N, C, H, W]`` -> each crop's median border colour; rounded to uint8 levels."""
    n = crops.shape[0]
    right = crops[torch.arange(n, device=crops.device), :, :, (widths - 1).clamp(min=0)]  # [N, C, H]
    border = torch.cat([crops[:, :, 0, :], crops[:, :, -1, :], crops[:, :, :, 0], right], dim=-1)
    colour = border.nanmedian(dim=-1).values  # [N, C]
    return torch.where(crops.isnan(), colour[:, :, None, None], crops).round_().clamp_(0, 255)


_GROUP_VALUES = 1 << 26  # page values cut in one call: 256 MiB of float32 pages, 10 letter pages at 150 dpi


def _page_groups(states: list[PageState], todo: dict[int, np.ndarray]) -> list[list[int]]:
    """Indices of states with words to cut, grouped by image size, at most :data:`_GROUP_VALUES` per group."""
    by_shape: dict[tuple[int, ...], list[list[int]]] = {}
    for si, words in todo.items():
        if len(words) == 0:
            continue
        shape = states[si].image.shape
        groups = by_shape.setdefault(shape, [[]])
        if groups[-1] and (len(groups[-1]) + 1) * int(np.prod(shape)) > _GROUP_VALUES:
            groups.append([])
        groups[-1].append(si)
    return [g for groups in by_shape.values() for g in groups]


def _same_device(have: torch.device, want: torch.device) -> bool:
    """Whether a tensor on ``have`` is on ``want`` (``cuda`` without an index means the current one)."""
    if have.type != want.type:
        return False
    return want.index is None or have.index is None or have.index == want.index


def device_page(state: PageState, device: torch.device) -> Tensor:
    """``state.image`` as ``uint8[H, W, 3]`` on ``device``, uploaded once and shared by the stages.

    The detector (fitting the page on the device) and the crop cutter both read the page there; the tensor
    is kept on the state with the array it came from, so a stage that replaces ``state.image`` (orientation,
    deskew) gets a fresh upload.
    """
    cached = state.device_image
    if cached is not None and cached[0] is state.image and _same_device(cached[1].device, device):
        return cached[1]
    page = to_device(state.image, device)
    state.device_image = (state.image, page)
    return page


def _upload(states: list[PageState], device: torch.device) -> Tensor:
    """Same-size pages of ``states`` -> contiguous ``float[G, 3, H, W]`` on ``device``.

    uint8 crosses the bus once per page (:func:`device_page`); the float batch is made contiguous once here,
    since ``roi_align`` would otherwise copy a channels-last input to contiguous memory on every call (once
    per width bucket).
    """
    pages = torch.stack([device_page(s, device) for s in states])  # [G, H, W, 3] uint8
    g, h, w, c = pages.shape
    out = torch.empty((g, c, h, w), dtype=torch.float32, device=device)
    return out.copy_(pages.permute(0, 3, 1, 2))


def _geometry(s: PageState, words: np.ndarray, straight: bool) -> tuple[np.ndarray, np.ndarray]:
    """Pixel boxes ``[n, 4]`` (or quads ``[n, 4, 2]``) of ``words`` on ``s.image`` and widths ``[n]`` at HEIGHT."""
    h, w = s.image.shape[:2]
    if straight:
        px = pixel_boxes(s.boxes[words], h, w)
        sizes = np.stack([px[:, 3] - px[:, 1], px[:, 2] - px[:, 0]], axis=1)
    else:
        px = s.polygons[words].astype(np.float64) * [w, h]
        sizes = np.maximum(np.round(polygon_sizes(px)), 1)
    return px, np.maximum(8, np.round(sizes[:, 1] * HEIGHT / sizes[:, 0])).astype(np.int64)


def _warp(page: Tensor, quads: np.ndarray, widths: np.ndarray, bucket: int) -> Tensor:
    """:func:`warp_crops` of pixel ``quads [n, 4, 2]`` of one ``page [3, H, W]``, NaN-padded to ``bucket``."""
    geometry = torch.from_numpy(quads).to(page.device, non_blocking=True)
    wt = torch.from_numpy(widths).to(page.device, non_blocking=True)
    return warp_crops(page, geometry, wt, height=HEIGHT, out_width=bucket, fill=float("nan"))


def _cut_group(
    states: list[PageState], group: list[int], todo: dict[int, np.ndarray], straight: bool, device: torch.device
) -> dict[int, tuple[Tensor, np.ndarray, np.ndarray, np.ndarray]]:
    """Crops of the pages ``group`` (same size): ``{bucket: (crops, state indices, word indices, widths)}``.

    Straight boxes of every page of the group are cut by one ``roi_align`` call per bucket (the page is the
    box's batch index); quads by one ``grid_sample`` call per page and bucket.
    """
    pages = _upload([states[si] for si in group], device)  # [G, 3, H, W]
    parts = [(j, si, *_geometry(states[si], todo[si], straight)) for j, si in enumerate(group)]
    page = np.concatenate([np.full(len(widths), j) for j, _, _, widths in parts])
    state = np.asarray(group)[page]
    words = np.concatenate([todo[si] for si in group]).astype(np.int64)
    widths = np.concatenate([p[3] for p in parts])
    px = np.concatenate([p[2] for p in parts])
    buckets = np.maximum(BUCKET, -(-widths // BUCKET) * BUCKET)  # bucket_width() of every crop
    out = {}
    for bucket in np.unique(buckets):
        sel = np.nonzero(buckets == bucket)[0]
        wt = torch.from_numpy(widths[sel]).to(device, non_blocking=True)
        if straight:
            geometry = torch.from_numpy(px[sel]).to(device, non_blocking=True)
            index = torch.from_numpy(page[sel]).to(device, non_blocking=True)
            crops = roi_crops(
                pages, geometry, wt, height=HEIGHT, out_width=int(bucket), fill=float("nan"), batch_index=index
            )
        else:  # sel is page-major: one warp per page keeps the order
            crops = torch.cat([_warp(pages[j], px[sel[page[sel] == j]], widths[sel[page[sel] == j]], int(bucket))
                               for j in np.unique(page[sel])])
        out[int(bucket)] = (_paper_fill(crops, wt), state[sel], words[sel], widths[sel])
    return out


def device_batches(
    states: list[PageState], todo: dict[int, np.ndarray], *, straight: bool, device: torch.device
) -> dict[int, tuple[Tensor, list[tuple[int, int]], np.ndarray]]:
    """Cut the crops of ``todo`` (state index -> word indices) on ``device``, grouped by bucket width.

    Pages of one size are uploaded and cut together (:func:`_cut_group`); within a bucket, crops keep the
    order of ``todo`` and of its word indices, so recognition batches do not depend on the grouping.

    Returns:
        ``{bucket width: (uint8-valued float crops [N, 3, HEIGHT, width], [(state, word)], widths [N])}``.
    """
    rank = {si: r for r, si in enumerate(todo)}
    groups: dict[int, list[tuple[Tensor, np.ndarray, np.ndarray, np.ndarray]]] = {}
    for group in _page_groups(states, todo):
        for bucket, part in _cut_group(states, group, todo, straight, device).items():
            groups.setdefault(bucket, []).append(part)
    out = {}
    for bucket, parts in sorted(groups.items()):
        crops = torch.cat([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
        state, words, widths = (np.concatenate([p[k] for p in parts]) for k in (1, 2, 3))
        order = np.argsort(np.array([rank[si] for si in state.tolist()]), kind="stable")
        if (order != np.arange(len(order))).any():  # pages of several sizes interleaved in todo
            crops = crops[torch.from_numpy(order).to(crops.device)]
            state, words, widths = state[order], words[order], widths[order]
        out[bucket] = (crops, list(zip(state.tolist(), words.tolist())), widths)
    return out


class DeviceRecognizeStage:
    """``crop`` + ``recognize`` on the device of a recognition predictor.

    Args:
        predictor: a :class:`~vision.predictors.recognition.predictor.RecognitionPredictor`: it reads the
            batches cut here (:meth:`read_batch`), and the crops it splits or turns (:meth:`is_split`,
            :meth:`is_tall`) itself.
        straight: boxes (``True``) or quads.
    """

    def __init__(self, predictor: Any, *, straight: bool = True) -> None:
        self.predictor, self.straight = predictor, straight

    def _special(self, s: PageState) -> np.ndarray:
        """``bool[N]``: crops the predictor must read itself (split when too wide, or tall)."""
        h, w = s.image.shape[:2]
        if self.straight:
            px = pixel_boxes(s.boxes, h, w)
            sizes = np.stack([px[:, 3] - px[:, 1], px[:, 2] - px[:, 0]], axis=1)
        else:
            sizes = polygon_sizes(s.polygons.astype(np.float64) * [w, h])
        return self.predictor.is_split(sizes) | self.predictor.is_tall(sizes)

    @torch.inference_mode()
    def __call__(self, states: list[PageState]) -> list[PageState]:
        p = self.predictor
        todo, special = {}, {}
        for i, s in enumerate(states):
            if s.needs_ocr:
                s.texts = [("", 0.0)] * len(s.boxes)
                flags = self._special(s)
                todo[i], special[i] = np.nonzero(~flags)[0], np.nonzero(flags)[0]
        for crops, keys, widths in device_batches(states, todo, straight=self.straight, device=p.device).values():
            for start in range(0, len(keys), p.batch_size):
                part = slice(start, start + p.batch_size)
                texts, confidences = p.read_batch(crops[part], widths[part])
                for (si, k), text, conf in zip(keys[part], texts, confidences):
                    states[si].texts[k] = (text, float(conf))
        self._reread_unsure(states, todo)
        self._read_special(states, special)
        for s in states:
            s.device_image = None  # frees the device copy: later stages read the host image
        return states

    def _host_crops(self, states: list[PageState], picked: dict[int, np.ndarray]
                    ) -> tuple[list[np.ndarray], list[tuple[int, int]]]:
        crops, keys = [], []
        for si, words in picked.items():
            s = states[si]
            if len(words):
                crops += box_crops(s.image, s.boxes[words]) if self.straight else polygon_crops(s.image, s.polygons[words])
                keys += [(si, int(k)) for k in words]
        return crops, keys

    def _reread_unsure(self, states: list[PageState], todo: dict[int, np.ndarray]) -> None:
        """Unsure readings of photos (of every page with a ``slanted`` predictor, as its own calls do) read
        again from host crops, sheared (the predictor's ``reread_slanted``), as :class:`RecognizeStage` does."""
        if not hasattr(self.predictor, "reread_slanted"):
            return
        every = bool(getattr(self.predictor, "slanted", False))
        unsure = {si: np.array([k for k in words if states[si].texts[k][1] < BELOW], dtype=np.int64)
                  for si, words in todo.items() if every or states[si].photo}
        crops, keys = self._host_crops(states, unsure)
        if crops:
            first = [states[si].texts[k] for si, k in keys]
            for (si, k), result in zip(keys, self.predictor.reread_slanted(crops, first)):
                states[si].texts[k] = result

    def _read_special(self, states: list[PageState], special: dict[int, np.ndarray]) -> None:
        crops, keys = self._host_crops(states, special)
        for (si, k), result in zip(keys, self.predictor(crops) if crops else []):
            states[si].texts[k] = result
