"""``detection_predictor``: pages of any size in, word boxes out (relative coordinates).

Pre-processing keeps the aspect ratio: each page is resized to fit the one of :data:`INPUT_SHAPES` whose
aspect ratio is closest to its own, and padded with white at the right and bottom. Five static shapes
(1024x1024, 1024x768, 768x1024, 1024x512, 512x1024, H x W) mean ``torch.compile`` builds at most five
graphs instead of one per page size; on CUDA (and when compiled) batches are padded to a power of two of
pages (:func:`padded_rows`), so the model sees a bounded set of shapes whatever the pages (cuDNN picks
kernels once per shape). Post-processing is :func:`vision.ops.db_postprocess`.

Where the resize runs is the ``resize`` option: ``"host"`` (OpenCV, the CPU default) or ``"device"`` (the
CUDA default: the page's bytes are copied to the device once and resized there by
:func:`vision.ops.resize.resize_uint8` with OpenCV's weights, sparing the host ~20 ms of one core per letter
page: 262-266 vs 208-221 pages/s on an H100, ``benchmarks/gpu_throughput.py --page-resize device|host``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Callable, Sequence

import cv2
import numpy as np
import torch
from torch import Tensor

from vision.fast.compile import mark_dynamic_rows
from vision.io.page import PageImage
from vision.predictors._device import onnx_runner, pick_device, place, registered_identity, wants_onnx
from vision.predictors.remote import installed, remote_detector
from vision.models._registry import default_model, get_entry, get_model
from vision.models.detection.dbnet import CONFIGS, DBNet, DBProbability
from vision.ops.db_postprocess import DBOptions, db_postprocess
from vision.ops.resize import resize_uint8
from vision.ops.transfer import to_device, to_host

__all__ = [
    "DetectionResult",
    "DetectionPredictor",
    "default_detector",
    "detection_predictor",
    "INPUT_SHAPES",
    "pick_shape",
    "fit_page",
    "ONNX_AXES",
    "padded_rows",
]

INPUT_SHAPES: tuple[tuple[int, int], ...] = ((1024, 1024), (1024, 768), (768, 1024), (1024, 512), (512, 1024))


@dataclass
class DetectionResult:
    """Words found on one page.

    Attributes:
        boxes: ``float32[N, 4]`` relative ``(x0, y0, x1, y1)``.
        scores: ``float32[N]`` mean text probability of each word region.
        polygons: ``float32[N, 4, 2]`` relative, clockwise from top-left (the box corners on straight pages).
        outlines: with ``outlines=True``, one ``float32[K, 2]`` relative polygon per word (4 to 32 points,
            clockwise): the word's region, which follows a curved baseline; else ``None``.
        angles: ``float32[N]`` the direction of each word's region in degrees, NaN for glyphs and marks
            (:func:`vision.ops.db_postprocess.kernel_angle`): a straight box keeps the tilt of its word here.
    """

    boxes: np.ndarray
    scores: np.ndarray
    polygons: np.ndarray
    outlines: list[np.ndarray] | None = None
    angles: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.boxes)


def pick_shape(height: int, width: int, shapes: Sequence[tuple[int, int]] = INPUT_SHAPES) -> tuple[int, int]:
    """The ``(H, W)`` in ``shapes`` whose aspect ratio is closest (in log scale) to ``height / width``."""
    ratio = np.log(height / width)
    return min(shapes, key=lambda s: (abs(np.log(s[0] / s[1]) - ratio), -s[0] * s[1]))


def fit_page(image: np.ndarray, shape: tuple[int, int]) -> tuple[np.ndarray, tuple[int, int]]:
    """Resize ``image (uint8[h, w, 3])`` keeping its aspect ratio to fit ``shape`` and pad it with white.

    Returns the ``uint8[H, W, 3]`` canvas and the ``(h', w')`` of the resized page in its top-left corner.
    """
    canvas = np.empty((shape[0], shape[1], 3), dtype=np.uint8)
    return canvas, _fit_into(image, canvas)


def fitted_size(size: tuple[int, int], shape: tuple[int, int], zoom: float = 1.0) -> tuple[int, int]:
    """``(h', w')`` of a page of ``size (h, w)`` resized, aspect kept, to fit a ``shape (H, W)`` canvas, then
    scaled by ``zoom`` (<= 1: the page fills that fraction of the canvas's side)."""
    h, w = size
    scale = min(shape[0] / h, shape[1] / w) * zoom
    return max(1, min(shape[0], round(h * scale))), max(1, min(shape[1], round(w * scale)))


def _fit_into(image: np.ndarray, canvas: np.ndarray, zoom: float = 1.0) -> tuple[int, int]:
    """:func:`fit_page` of ``image`` written into ``canvas (uint8[H, W, 3])`` at ``zoom``; returns the
    ``(h', w')`` used."""
    h, w = image.shape[:2]
    nh, nw = fitted_size((h, w), canvas.shape[:2], zoom)
    interp = cv2.INTER_AREA if nh < h or nw < w else cv2.INTER_LINEAR
    canvas[:nh, :nw] = cv2.resize(image, (nw, nh), interpolation=interp) if (nh, nw) != (h, w) else image
    canvas[nh:] = 255
    canvas[:nh, nw:] = 255
    return nh, nw


def _as_rgb(page: np.ndarray | Tensor | PageImage) -> np.ndarray | Tensor:
    image = page.image if isinstance(page, PageImage) else page
    if isinstance(image, Tensor):  # a page already uploaded: uint8 [H, W, 3] on the predictor's device
        if image.dtype != torch.uint8 or image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) < 1:
            raise ValueError(
                f"page tensors must be uint8 H x W x 3, got {image.dtype} of shape {tuple(image.shape)}"
            )
        return image
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        raise ValueError(
            f"pages must be uint8 numpy arrays or PageImage, got {type(image).__name__}"
            f"{'' if not isinstance(image, np.ndarray) else ' of dtype ' + str(image.dtype)}"
        )
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    if image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) < 1:
        raise ValueError(f"pages must be H x W x 3 RGB, got shape {image.shape}")
    return image


class DetectionPredictor:
    """Batches pages by input shape, runs a probability model and decodes word boxes.

    Args:
        model: ``float[N, 3, H, W] -> float[N, 1, H, W]`` probabilities (a :class:`DBProbability`, or a fast
            path of one: compiled, quantized, an ONNX session wrapper).
        mean, std: input normalisation of RGB in [0, 1].
        device, dtype: where and in which float type inputs are fed to ``model``.
        batch_size: pages per forward pass.
        straight: straight boxes (``True``) or rotated 4-point polygons.
        outlines: also return each word's outline polygon (:attr:`DetectionResult.outlines`).
        params: post-processing thresholds.
        shapes: the static input shapes pages are padded to.
        resize: ``"host"`` (OpenCV) or ``"device"`` (on ``device``, see the module docstring); ``None``:
            ``"device"`` on CUDA, ``"host"`` elsewhere.
        channels_last: feed ``model`` NHWC inputs (a model stored channels-last, :mod:`vision.fast.memory_format`).
        pad_batches: pad every batch to a power of two of pages (:func:`padded_rows`, repeating its last
            page) with the batch dimension marked dynamic, so the model sees a few row counts per input
            shape (cuDNN plans) and one compiled graph per shape; ``None``: on CUDA.
    """

    def __init__(
        self,
        model: Callable[[Tensor], Tensor],
        *,
        mean: Sequence[float],
        std: Sequence[float],
        device: torch.device,
        dtype: torch.dtype = torch.float32,
        batch_size: int = 4,
        straight: bool = True,
        params: DBOptions = DBOptions(),
        shapes: Sequence[tuple[int, int]] = INPUT_SHAPES,
        resize: str | None = None,
        channels_last: bool = False,
        pad_batches: bool | None = None,
        outlines: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        resize = resize or ("device" if torch.device(device).type == "cuda" else "host")
        if resize not in ("host", "device"):
            raise ValueError(f"resize must be 'host' or 'device', got {resize!r}")
        self.resize, self.channels_last = resize, channels_last
        self.pad_batches = torch.device(device).type == "cuda" if pad_batches is None else pad_batches
        self.model, self.device, self.dtype = model, torch.device(device), dtype
        self.batch_size, self.straight, self.params, self.shapes = batch_size, straight, params, tuple(shapes)
        self.outlines = outlines
        self.remote: Callable[..., tuple[np.ndarray, list[tuple[int, int]]]] | None = None  # a model server's
        self._mean = torch.tensor(mean, device=device).view(1, 3, 1, 1) * 255
        self._std = torch.tensor(std, device=device).view(1, 3, 1, 1) * 255
        self._mean_np = np.asarray(mean, np.float32) * 255
        self._inv_std_np = 1 / (np.asarray(std, np.float32) * 255)

    def preprocess(self, canvases: np.ndarray | Tensor) -> Tensor:
        """``uint8[B, H, W, 3]`` canvases (host array, or a tensor on the device) to normalised
        ``dtype[B, 3, H, W]`` on the device.

        On the CPU each channel plane is normalised straight into a contiguous float32 buffer by NumPy
        (4 ms for a 1024 x 768 page on our CPU, against 37 ms for torch's permute-then-normalise, which
        walks the channels-last input with a stride of 3).
        """
        if self.device.type == "cpu" and isinstance(canvases, np.ndarray):
            b, h, w, _ = canvases.shape
            out = np.empty((b, 3, h, w), np.float32)
            for c in range(3):
                np.subtract(canvases[..., c], self._mean_np[c], out=out[:, c], dtype=np.float32)
                out[:, c] *= self._inv_std_np[c]
            return torch.from_numpy(out).to(self.dtype)
        x = to_device(canvases, self.device) if isinstance(canvases, np.ndarray) else canvases.to(self.device)
        x = x.permute(0, 3, 1, 2)  # an NHWC view of the uint8 canvases
        x = ((x.float() - self._mean) / self._std).to(self.dtype)
        return x.contiguous(memory_format=torch.channels_last if self.channels_last else torch.contiguous_format)

    @torch.inference_mode()
    def probabilities(self, canvases: np.ndarray | Tensor) -> np.ndarray:
        """Text probability maps ``float32[B, H, W]`` of ``uint8[B, H, W, 3]`` canvases.

        From a GPU the maps come back in one copy into pinned memory (DMA straight into the array, no
        staging copy by the host); the host waits once per batch.
        """
        (prob,) = to_host(self.device_probabilities(canvases).float())
        return prob

    @torch.inference_mode()
    def device_probabilities(self, canvases: np.ndarray | Tensor) -> Tensor:
        """The maps of :meth:`probabilities` where the model left them: on its device, in its dtype."""
        n = len(canvases)
        rows = padded_rows(n, self.batch_size) if self.pad_batches else n
        if rows > n:  # a few row counts per input shape (see pad_batches)
            pad = [canvases[-1:]] * (rows - n)
            canvases = (np.concatenate([canvases, *pad]) if isinstance(canvases, np.ndarray)
                        else torch.cat([canvases, *pad]))
        x = self.preprocess(canvases)
        if self.pad_batches:
            mark_dynamic_rows(x)  # compiled: one graph per input shape, any row count
        return torch.as_tensor(self.model(x))[:n, 0]

    def __call__(self, pages: Sequence[np.ndarray | Tensor | PageImage], zooms: Sequence[float] | None = None
                 ) -> list[DetectionResult]:
        """Word boxes of each page: ``uint8[H, W, 3]`` arrays, ``PageImage`` objects, or pages already on the
        device as ``uint8[H, W, 3]`` tensors (fitted there when ``resize == "device"``).

        ``zooms`` (one per page, each in (0, 1]; ``None``: all 1) shrinks pages within their input shape: a
        page at zoom 0.5 fills half of its shape's height or width, the rest white, so its words reach the
        model at half the size (:mod:`vision.pipelines.ocr.text_scale`). Boxes stay relative to the page.
        """
        images = [_as_rgb(p) for p in pages]
        zooms = [1.0] * len(images) if zooms is None else [float(z) for z in zooms]
        if len(zooms) != len(images) or not all(0 < z <= 1 for z in zooms):
            raise ValueError(f"need one zoom in (0, 1] per page, got {zooms} for {len(images)} pages")
        groups: dict[tuple[int, int], list[int]] = {}
        for i, img in enumerate(images):
            groups.setdefault(pick_shape(*img.shape[:2], self.shapes), []).append(i)
        results: list[DetectionResult | None] = [None] * len(images)
        for shape, idx in groups.items():
            for start in range(0, len(idx), self.batch_size):
                chunk = idx[start : start + self.batch_size]
                probs, sizes = self.maps([images[i] for i in chunk], shape, [zooms[i] for i in chunk])
                for i, prob, (h, w) in zip(chunk, probs, sizes):
                    out = db_postprocess(prob[:h, :w], self.params, straight=self.straight, outlines=self.outlines)
                    results[i] = DetectionResult(out.boxes, out.scores, out.polygons, out.outlines,
                                                 out.angles)
        return results  # type: ignore[return-value]

    def maps(self, images: list[np.ndarray | Tensor], shape: tuple[int, int], zooms: list[float]
             ) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """Probability maps ``float32[B, H, W]`` of ``images`` fitted into ``shape`` at their ``zooms``, and the
        ``(h', w')`` each fills: the model step, run by a model server when ``remote`` is set
        (:mod:`vision.predictors.remote`)."""
        if self.remote is not None:
            return self.remote(images, shape, zooms)
        canvases, sizes = self._fit(images, shape, zooms)
        return self.probabilities(canvases), sizes

    def _fit(
        self, images: list[np.ndarray | Tensor], shape: tuple[int, int], zooms: list[float] | None = None
    ) -> tuple[np.ndarray | Tensor, list[tuple[int, int]]]:
        """``uint8[B, H, W, 3]`` white canvases of ``shape`` with each page fitted in its top-left corner at
        its zoom (a host array, or a tensor on the device when ``resize == "device"``) and the ``(h', w')``
        sizes."""
        zooms = zooms or [1.0] * len(images)
        if self.resize == "host":
            canvases = np.empty((len(images), shape[0], shape[1], 3), dtype=np.uint8)
            hosted = [im.cpu().numpy() if isinstance(im, Tensor) else im for im in images]
            return canvases, [_fit_into(im, canvas, z) for im, canvas, z in zip(hosted, canvases, zooms)]
        out = torch.full((len(images), shape[0], shape[1], 3), 255, dtype=torch.uint8, device=self.device)
        sizes = []
        for j, (image, zoom) in enumerate(zip(images, zooms)):
            nh, nw = fitted_size(tuple(image.shape[:2]), shape, zoom)
            page = image.to(self.device) if isinstance(image, Tensor) else to_device(image, self.device)
            out[j, :nh, :nw] = resize_uint8(page, (nh, nw)) if (nh, nw) != tuple(image.shape[:2]) else page
            sizes.append((nh, nw))
        return out, sizes


def padded_rows(n: int, batch_size: int) -> int:
    """Rows a batch of ``n`` pages is padded to: the next power of two, at least a quarter of ``batch_size``
    (rounded up to a power of two), at most ``batch_size``: three row counts per shape for a batch size of 16."""
    floor = 1 << max(0, (max(1, batch_size // 4) - 1).bit_length())
    return min(batch_size, max(n, floor, 1 << max(0, (n - 1).bit_length())))


ONNX_AXES = {"images": {0: "batch", 2: "height", 3: "width"}, "prob": {0: "batch", 2: "height", 3: "width"}}
"""Dynamic axes of the detector's ONNX export: any batch and any page size (multiples of 32)."""


def default_detector() -> str:
    """The registered architecture :func:`detection_predictor` builds when none is named."""
    return default_model("detection")


def _dbnet(arch: str, weights: str | None) -> DBNet:
    model = get_model(arch, weights=weights)
    if not isinstance(model, DBNet):
        raise ValueError(f"{arch!r} is not a DBNet")
    return model


def detection_predictor(
    arch: str | None = None,
    *,
    weights: str | None = "default",
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    batch_size: int = 4,
    assume_straight_pages: bool = True,
    params: DBOptions | None = None,
    onnx: bool | None = None,
    resize: str | None = None,
    channels_last: bool | None = None,
    shapes: Sequence[tuple[int, int]] | None = None,
    compile: bool = False,
    outlines: bool = False,
    cuda_graphs: bool | None = None,
) -> DetectionPredictor:
    """Build a word detector with the shipped offline weights.

    Args:
        arch: a registered detection architecture (default: the registry's default, the CPU-sized one).
        weights: ``"default"`` (shipped file), a safetensors path, or ``None`` (random init, for tests).
        device: ``"cpu"``, ``"cuda"``...; picks CUDA when available.
        dtype: ``torch.float32`` (default) or ``torch.bfloat16``.
        batch_size: pages per forward pass.
        assume_straight_pages: straight boxes; ``False`` returns rotated 4-point polygons.
        params: post-processing settings (default: those recorded with the shipped weights).
        onnx: run the model with onnxruntime (:func:`vision.fast.onnx.cached_runner`, exported once per
            weights). ``None``: on CPU in float32 when onnxruntime is installed (2.5x faster than eager
            PyTorch for a 1024 x 768 page on our 2-core CPU); ``False``: eager PyTorch.
        resize: where pages are resized, ``"host"`` or ``"device"``; ``None``: ``"device"`` on CUDA (host
            cores bound GPU throughput), ``"host"`` elsewhere.
        channels_last: run the PyTorch model in NHWC (:mod:`vision.fast.memory_format`); ``None``: NCHW (each
            new input shape costs seconds in NHWC on CUDA).
        shapes: the static ``(height, width)`` inputs pages are fitted into (``None``: those recorded with
            the shipped weights, else :data:`INPUT_SHAPES`; smaller inputs are faster and coarser).
        compile: ``torch.compile`` the model (batches padded, batch dimension dynamic: one graph per input
            shape, see ``pad_batches``).
        outlines: also return each word's outline polygon, which follows text on a curved baseline
            (:attr:`DetectionResult.outlines`).
        cuda_graphs: replay the eager CUDA model from CUDA graphs (:mod:`vision.fast.cuda_graphs`; ``None``:
            on CUDA).
    """
    arch = arch or default_model("detection")
    entry = get_entry(arch)
    if entry.task != "detection":
        raise ValueError(f"{arch!r} is a {entry.task} model, not a detection one")
    dev = pick_device(device)
    dtype = dtype or torch.float32
    meta = entry.weights.meta if entry.weights and weights == "default" else {}
    if params is None:
        params = DBOptions(**meta.get("postprocess", {}))
    if not shapes:
        shapes = [tuple(s) for s in meta.get("input_shapes", ())] or INPUT_SHAPES
    network = cache(lambda: _dbnet(arch, weights))  # built once, if at all
    if (client := installed()) is not None and client.serves(dev):  # the model runs in a model server
        return remote_detector(client, config=CONFIGS[arch] if arch in CONFIGS else network().config,
                               params=params, straight=assume_straight_pages, outlines=outlines, arch=arch,
                               weights=weights and str(weights), dtype=dtype, batch_size=batch_size,
                               shapes=tuple(shapes), compile=compile, cuda_graphs=cuda_graphs,
                               channels_last=channels_last)

    runner, nhwc = None, False
    if wants_onnx(onnx, dev, dtype, compile=compile):
        # A registered DBNet with weights is keyed by its weights, so a cached export needs no model (nor
        # torchvision); anything else is built and keyed by its tensors.
        identity = registered_identity(arch, weights, "DBProbability") if arch in CONFIGS else None
        runner = onnx_runner(lambda: DBProbability(network()).eval(), torch.zeros(1, 3, 256, 256), name=arch,
                             device=dev, required=bool(onnx), threads=torch.get_num_threads(),
                             dynamic_axes=ONNX_AXES, output_name="prob", identity=identity)
    if runner is None:
        prob, nhwc = place(DBProbability(network()).eval(), dev, dtype, channels_last=channels_last,
                           compile=compile, cuda_graphs=cuda_graphs)
    config = CONFIGS[arch] if arch in CONFIGS else network().config
    return DetectionPredictor(
        runner if runner is not None else prob,
        mean=config.mean,
        std=config.std,
        device=dev,
        dtype=dtype,
        batch_size=batch_size,
        straight=assume_straight_pages,
        params=params,
        resize=resize,
        channels_last=nhwc,
        shapes=tuple(shapes),
        pad_batches=True if compile else None,
        outlines=outlines,
    )

