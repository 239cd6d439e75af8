"""What the service builds once at start-up and shares: predictors, the batcher, the job runner.

The REST routes (through ``Depends``), the job handler and the Gradio UI all call the same
:class:`OcrService`, so every model call goes through one dynamic batcher: one thread, or with model replicas
(``models.replicas``) one thread per replica, each batch split into chunks that idle replicas take.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from vision.app.api.metrics import Metrics
from vision.app.api.priority import background_thread
from vision.app.api.request_batcher import DynamicBatcher
from vision.app.api.settings import ModelSettings, ServiceSettings
from vision.io.budget import PixelBudget
from vision.io.page import PageImage
from vision.io.pdf_worker import set_worker_nice, start_forkserver
from vision.structures import Document, Page

__all__ = ["OcrService", "Runtime", "SamService", "build_ocr_predictor", "build_runtime", "video_available"]

log = logging.getLogger(__name__)


def build_ocr_predictor(models: ModelSettings) -> Any:
    """The OCR predictor the settings describe (built once per process)."""
    from vision.pipelines.ocr.predictor import ocr_predictor

    return ocr_predictor(options=models.ocr_options())


def video_available() -> bool:
    """Whether the video OCR pipeline is installed in this build."""
    return importlib.util.find_spec("vision.pipelines.video.pipeline") is not None


class OcrService:
    """The shared OCR predictor behind a :class:`DynamicBatcher`; callable like the predictor itself.

    Args:
        predictor: ``predictor(pages) -> Document`` with one output page per input page, in order.
        max_batch_size / max_wait_s / max_queue: see :class:`DynamicBatcher`.
        metrics: receives batch sizes, model time and queue depth.
        nice: niceness added to the batcher thread (:mod:`vision.app.api.priority`).
    """

    MAX_VARIANTS = 16
    """Option sets (languages, orientation, rotated) served at once, each with its own batcher thread."""

    def __init__(
        self,
        predictor: Callable[[list[PageImage]], Document],
        *,
        max_batch_size: int = 16,
        max_wait_s: float = 0.005,
        max_queue: int = 1024,
        metrics: Metrics | None = None,
        nice: int = 0,
    ) -> None:
        self.predictor, self.nice = predictor, nice
        self._settings = {"max_batch_size": max_batch_size, "max_wait_s": max_wait_s, "max_queue": max_queue,
                          "metrics": metrics, "nice": nice}
        self._langs: dict[tuple, OcrService] = {}
        self._lang_lock = threading.Lock()
        replicas = getattr(predictor, "replicas", None)
        self.batcher: DynamicBatcher[PageImage, Page] = DynamicBatcher(
            self._run,
            max_batch_size=max_batch_size,
            max_wait_s=max_wait_s,
            max_queue=max_queue,
            observer=metrics,
            name="ocr-batcher",
            workers=len(replicas) if replicas else 1,  # a replica pool reads several batches at once
        )

    def _run(self, pages: list[PageImage]) -> list[Page]:
        background_thread(self.nice)  # the batcher thread (once): model calls yield to the event loop
        result = self.predictor(pages).pages
        for page, image in zip(result, pages, strict=True):
            if page.image is None:
                page.image = image.image  # searchable PDFs and the UI draw on the page image
        return result

    def pages(self, pages: Sequence[PageImage], timeout: float | None = None) -> list[Page]:
        """OCR ``pages`` (merged with other callers' pages into model batches); blocks up to ``timeout``."""
        return self.batcher(pages, timeout=timeout) if pages else []

    def __call__(self, pages: Sequence[PageImage], timeout: float | None = None) -> Document:
        """Predictor-compatible call: ``pages`` -> :class:`Document` (used by video OCR and the UI)."""
        return Document(pages=self.pages(list(pages), timeout=timeout))

    def for_lang(self, lang: str | None) -> OcrService:
        """The service reading documents in ``lang`` (``"de"``, ``"de+fr"``); see :meth:`variant`."""
        return self.variant(lang=lang)

    def variant(self, *, lang: str | None = None, **changes: bool | str) -> OcrService:
        """The service for one request's options: ``lang`` (``"de"``, ``"de+fr"``: that language's lexicons)
        and :data:`~vision.pipelines.ocr.predictor.PER_CALL_OPTIONS` fields of
        :class:`~vision.pipelines.ocr.options.OCROptions` (``detect_orientation``, ``assume_straight_pages``,
        ``photo`` as its mode).

        The same models behind its own batcher, built on first use and kept: at most
        :attr:`MAX_VARIANTS` option sets (past that, the least recently used one is retired: its batcher
        answers what is queued, then stops once idle, bounding the batcher threads).
        No language and no change from the server's options: this service.

        Raises:
            ValueError: an unknown or unsupported language, or a predictor that cannot change these options.
        """
        from vision.pipelines.ocr.options import OCROptions, options_with
        from vision.predictors.recognition.languages import parse_lang

        codes = parse_lang(lang)
        base = getattr(self.predictor, "options", None)
        if isinstance(base, OCROptions):  # only what differs from the server's options (photo: its mode)
            changes = {k: v for k, v in changes.items() if options_with(base, **{k: v}) != base}
        if not codes and not changes:
            return self
        key = (codes, tuple(sorted(changes.items())))
        with self._lang_lock:
            if key in self._langs:  # most recently used last: eviction takes the least recently used
                self._langs[key] = self._langs.pop(key)
            else:
                predictor = self.predictor
                if codes:
                    if not hasattr(predictor, "with_lang"):
                        raise ValueError("this server's predictor cannot change language per request")
                    predictor = predictor.with_lang("+".join(codes))
                if changes:
                    if not hasattr(predictor, "with_options"):
                        raise ValueError("this server's predictor cannot change its options per request")
                    try:
                        predictor = predictor.with_options(**changes)
                    except TypeError as exc:
                        raise ValueError(str(exc)) from exc
                if len(self._langs) >= self.MAX_VARIANTS:  # bound the batcher threads: retire the least
                    self._langs.pop(next(iter(self._langs))).retire()  # recently used once it is idle
                self._langs[key] = OcrService(predictor, **self._settings)
            return self._langs[key]

    def retire(self) -> None:
        """Stop this service's batcher (and its variants') once idle; what is queued is still answered."""
        self._stop("retire")

    def close(self) -> None:
        """Stop the batchers, then the predictor's replica processes if it has any."""
        self._stop("close")
        close = getattr(self.predictor, "close", None)
        if callable(close):
            close()

    def _stop(self, how: str) -> None:
        """``batcher.retire()`` or ``batcher.close()`` here and in every variant; forget the variants."""
        getattr(self.batcher, how)()
        with self._lang_lock:
            for service in self._langs.values():
                getattr(service, how)()
            self._langs.clear()


@dataclass(frozen=True)
class MaskResult:
    """One predicted mask: boolean ``(H, W)`` array over the image and the model's IoU estimate."""

    mask: np.ndarray
    score: float


class SamService:
    """A SAM predictor shared by requests: ``set_image`` + ``predict`` run under one lock (it is stateful)."""

    def __init__(self, predictor: Any) -> None:
        self.predictor = predictor
        self._lock = threading.Lock()

    def segment(
        self,
        image: np.ndarray,
        *,
        points: np.ndarray | None = None,
        labels: np.ndarray | None = None,
        box: np.ndarray | None = None,
        multimask: bool = True,
    ) -> list[MaskResult]:
        """Masks for one prompt on an RGB ``(H, W, 3)`` uint8 image, best score first.

        ``points`` are ``(N, 2)`` pixel ``(x, y)``, ``labels`` ``(N,)`` with 1 = object, 0 = background,
        ``box`` is ``(4,)`` pixel ``(x0, y0, x1, y1)``.
        """
        with self._lock:
            self.predictor.set_image(image)
            prediction = self.predictor.predict(points=points, labels=labels, boxes=box, multimask=multimask)
        masks = np.asarray(prediction.masks[0], dtype=bool)  # one prompt: (M, H, W)
        scores = np.asarray(prediction.scores[0], dtype=np.float64)  # (M,)
        order = np.argsort(-scores)
        return [MaskResult(masks[i], float(scores[i])) for i in order]


@dataclass
class Runtime:
    """Everything built once per process from :class:`ServiceSettings`."""

    settings: ServiceSettings
    metrics: Metrics
    ocr: OcrService
    sam: SamService | None = None
    models: dict[str, str] = field(default_factory=dict)
    video: bool = False
    budget: PixelBudget = field(default_factory=lambda: PixelBudget(200_000_000))

    def close(self) -> None:
        self.ocr.close()


def _build_sam(models: ModelSettings) -> SamService | None:
    if models.sam_checkpoint is None:
        return None
    if importlib.util.find_spec("vision.predictors.segmentation.predictor") is None:
        log.warning("a SAM checkpoint is configured but this build has no SAM predictor")
        return None
    from vision.predictors.segmentation.predictor import sam_predictor

    return SamService(
        sam_predictor(str(models.sam_checkpoint), model_type=models.sam_model_type, device=models.device)
    )


def _model_names(models: ModelSettings) -> dict[str, str]:
    """``role -> "architecture (weights)"`` for /readyz, with registry defaults resolved."""
    from vision.models._registry import default_model

    return {
        "detection": f"{models.det_arch or default_model('detection')} ({models.det_weights})",
        "recognition": f"{models.reco_arch or default_model('recognition')} ({models.reco_weights})",
    }


def build_runtime(
    settings: ServiceSettings,
    metrics: Metrics | None = None,
    *,
    predictor: Callable[[list[PageImage]], Document] | None = None,
) -> Runtime:
    """Build the predictors (or use ``predictor``) and start the batcher."""
    metrics = metrics or Metrics()
    if settings.models.torch_threads is not None:
        # Process-wide, set once at start-up: on a busy CPU, one intra-op thread per process avoids OpenMP
        # threads spinning against request threads (measured 7x faster on a loaded 2-core machine).
        torch.set_num_threads(settings.models.torch_threads)
    models = _model_names(settings.models) if predictor is None else {"ocr": "provided by the caller"}
    predictor = predictor if predictor is not None else build_ocr_predictor(settings.models)
    b = settings.batching
    ocr = OcrService(
        predictor,
        max_batch_size=b.max_size,
        max_wait_s=b.max_wait_ms / 1000,
        max_queue=b.max_queue,
        metrics=metrics,
        nice=settings.worker_nice,
    )
    sam = _build_sam(settings.models)
    if sam is not None:
        models["segmentation"] = (
            f"sam_{settings.models.sam_model_type} ({settings.models.sam_checkpoint.name})"
        )
    metrics.models_loaded.set(1)
    budget = PixelBudget(settings.limits.max_inflight_pixels)
    set_worker_nice(settings.worker_nice)
    start_forkserver()  # PDF workers fork from it; the first request should not wait for its start
    return Runtime(settings, metrics, ocr, sam=sam, models=models, video=video_available(), budget=budget)
