"""End-to-end OCR: ``ocr_predictor()`` and the stages it composes.

    read -> (rectify) -> text_layer -> (orientation) -> detect -> photo -> (deskew) -> crop -> recognize
    -> show_through -> sparse -> script -> layout -> (structure)  =>  Document

The stages themselves are in :mod:`vision.pipelines.ocr.stages`.

Each stage is a callable over a batch of :class:`~vision.pipelines.base.PageState`; swap one by name with
``predictor.pipeline = predictor.pipeline.replace("detect", my_stage)``. The predictor feeds pages in batches
of ``pages_per_batch`` (pages are read by a background thread while the models run), and recognition reads
the crops of all pages of a batch in one call, so its batches stay full whatever the words per page.
"""

from __future__ import annotations

import collections
import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import torch

from vision.pipelines._prefetch import prefetch
from vision.pipelines.base import Pipeline, as_pages, chunked
from vision.pipelines.ocr.options import OCROptions, options_with
from vision.pipelines.ocr.orientation import DeskewStage, OrientationStage
from vision.pipelines.ocr.photo import PhotoStage
from vision.pipelines.ocr.polarity import PolarityStage
from vision.pipelines.ocr.rectify import RectifyStage
from vision.pipelines.ocr.show_through import ShowThroughStage
from vision.pipelines.ocr.sparse import SparseOptions, SparseStage
from vision.pipelines.ocr.stages import (
    CropStage,
    DetectStage,
    LayoutStage,
    RecognizeStage,
    read_stage,
    split_spaced,
)
from vision.pipelines.ocr.text_layer import TextLayerStage
from vision.pipelines.ocr.text_scale import TextScaleStage
from vision.structures import Document, Page

if TYPE_CHECKING:
    from vision.pipelines.ocr.replicas import ReplicaPool

PER_CALL_OPTIONS = frozenset({"detect_orientation", "assume_straight_pages", "outlines", "photo"})
"""The :class:`OCROptions` fields :meth:`OCRPredictor.with_options` changes on a built predictor."""

__all__ = [
    "PER_CALL_OPTIONS",
    "CropStage",
    "DetectStage",
    "LayoutStage",
    "OCROptions",
    "OCRPredictor",
    "RecognizeStage",
    "build_pipeline",
    "ocr_predictor",
    "read_stage",
    "split_spaced",
]


class OCRPredictor:
    """``predictor(doc) -> Document`` for a ``DocumentFile``, ``PageImage`` objects or numpy pages.

    Attributes:
        pipeline: the stages (replace one to change the behaviour).
        options: the settings it was built with.
        replicas: with ``options.replicas > 1``, the :class:`~vision.pipelines.ocr.replicas.ReplicaPool` that
            reads each call's pages (the ``pipeline`` here then serves :meth:`map` and the ``with_*`` copies).
    """

    def __init__(self, pipeline: Pipeline, options: OCROptions, replicas: ReplicaPool | None = None) -> None:
        self.pipeline, self.options, self.replicas = pipeline, options, replicas

    def __call__(self, doc: Any) -> Document:
        source = getattr(doc, "source", None)
        pages: list[Page] = []
        if self.replicas is not None:  # a round of pages_per_batch pages (at least one per replica) at a time,
            from vision.pipelines.ocr.replicas import gather  # the next round queued while this one is read

            rounds: collections.deque = collections.deque()
            for batch in chunked(as_pages(doc), max(self.options.pages_per_batch, len(self.replicas))):
                rounds.append(self.replicas.submit(batch))
                if len(rounds) > 1:
                    pages.extend(gather(rounds.popleft()))
            while rounds:
                pages.extend(gather(rounds.popleft()))
            return Document(pages=pages, source=source)
        for batch in prefetch(chunked(as_pages(doc), self.options.pages_per_batch)):
            pages.extend(self.pipeline(batch))
        return Document(pages=pages, source=source)

    def close(self) -> None:
        """Stop the replica processes, if any (the predictor then reads in this process)."""
        if self.replicas is not None:
            self.replicas.close()
            self.replicas = None

    def map(self, inputs: Iterable[Any], *, workers: int = 0, read: Callable | None = None,
            finish: Callable | None = None, ahead: int | None = None, post: str | None = None,
            errors: str = "raise") -> Iterator[Any]:
        """OCR many documents: yields one :class:`Document` (or ``finish(item, document)``) per input, in
        input order, streaming (:func:`vision.pipelines.ocr.bulk.bulk_map`: reading and post-processing in
        ``workers`` processes, the models here on batches of pages taken across documents).

        ``inputs``: file paths or URIs (``s3://bucket/a.pdf``), ``DocumentFile`` objects, lists of
        ``PageImage`` objects or numpy pages.
        ``errors="return"`` yields a failed document's exception in its place instead of raising it.
        """
        from vision.pipelines.ocr.bulk import bulk_map

        return bulk_map(self, inputs, workers=workers, read=read, finish=finish, ahead=ahead,
                        post=post, errors=errors)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"OCRPredictor({self.pipeline!r})"

    def with_lang(self, lang: str | None) -> OCRPredictor:
        """A predictor sharing this one's models whose recognizer decodes with ``lang``'s lexicons (the REST
        API's per-request ``lang``).

        Raises:
            ValueError: an unknown language, or a recognizer that takes no lexicon.
        """
        from vision.predictors.recognition.languages import lexicon_for, parse_lang

        if parse_lang(lang) == parse_lang(self.options.lang):
            return self
        reco = self.pipeline["recognize"].predictor
        if not hasattr(reco, "with_lexicon"):
            raise ValueError("this predictor's recognizer takes no lexicon: lang cannot change per call")
        clone = copy.copy(self.pipeline["recognize"])
        clone.predictor = reco.with_lexicon(lexicon_for(lang))
        pipeline = self.pipeline.replace("recognize", clone)
        if "curved" in pipeline.names:
            curved = copy.copy(pipeline["curved"])
            curved.predictor = clone.predictor
            pipeline = pipeline.replace("curved", curved)
        if "script" in pipeline.names:
            script = copy.copy(pipeline["script"])
            script.lexicon = clone.predictor.lexicon.words
            pipeline = pipeline.replace("script", script)
        return OCRPredictor(pipeline, replace(self.options, lang=lang, replicas=1))  # reads in this process

    def with_options(self, **changes: Any) -> OCRPredictor:
        """A predictor sharing this one's models (and its language) with other :data:`PER_CALL_OPTIONS`
        (``detect_orientation``, ``assume_straight_pages``, ``photo``): the REST API's per-request
        ``orientation``, ``rotated`` and ``photo`` (a predictor built without the photo detector, with
        ``photo="off"`` or a detector of the caller's, gets only the gate's ``sparse`` rule). Its stages are
        built anew by :func:`build_pipeline` (stages replaced by hand are not carried over); unchanged
        options return this predictor.

        Raises:
            TypeError: an option that cannot change per call.
            ValueError: straight/rotated boxes asked of a detector that cannot switch them.
        """
        unknown = sorted(changes.keys() - PER_CALL_OPTIONS)
        if unknown:
            raise TypeError(
                f"{', '.join(unknown)} cannot change per call; per-call options are "
                f"{', '.join(sorted(PER_CALL_OPTIONS))}"
            )
        options = options_with(self.options, **changes)
        if options == self.options:
            return self
        options = replace(options, replicas=1)  # the copy reads in this process
        detectors = [self.pipeline["detect"].predictor, self.pipeline["detect"].photo_predictor]
        for name, attr in (("assume_straight_pages", "straight"), ("outlines", "outlines")):
            if getattr(options, name) == getattr(self.options, name):
                continue
            for i, detector in enumerate(detectors):
                if detector is None:
                    continue
                if not hasattr(detector, attr):
                    raise ValueError(f"this predictor's detector cannot switch {name}")
                detectors[i] = copy.copy(detector)  # shares the model; only the box decoding differs
                setattr(detectors[i], attr, getattr(options, name))
        pipeline = build_pipeline(options, detectors[0], self.pipeline["recognize"].predictor, detectors[1])
        return OCRPredictor(pipeline, options)


def _on_device(options: OCROptions, reco_predictor: Callable) -> bool:
    """Whether crops are cut on the recognizer's device (a recognition predictor on a GPU, unless told)."""
    from vision.predictors.recognition.predictor import RecognitionPredictor

    usable = isinstance(reco_predictor, RecognitionPredictor)
    if options.crops_on_device is None:
        return usable and reco_predictor.device.type != "cpu"
    if options.crops_on_device and not usable:
        raise ValueError(
            "crops_on_device needs a RecognitionPredictor (its model runs on the crops directly)"
        )
    return options.crops_on_device


def _shared_upload(det_predictor: Callable, reco_predictor: Callable) -> torch.device | None:
    """The device where the detector and the crop cutter can share one upload of each page: a detection
    predictor that fits pages on the recognizer's device (else ``None``: the detector reads host arrays)."""
    from vision.predictors.detection.predictor import DetectionPredictor

    if isinstance(det_predictor, DetectionPredictor) and det_predictor.resize == "device":
        if det_predictor.device == reco_predictor.device:  # type: ignore[attr-defined]
            return det_predictor.device
    return None


def build_pipeline(options: OCROptions, det_predictor: Callable, reco_predictor: Callable,
                   photo_predictor: Callable | None = None) -> Pipeline:
    """The standard stages for ``options`` around a detection and a recognition predictor, and the detector
    of pages the ``photo`` gate marks (``None``: ``det_predictor`` reads them too; else one built like
    ``det_predictor``, since it reads the same page uploads).

    With crops on the device, one ``recognize`` stage cuts and reads (:mod:`vision.pipelines.ocr.device`).
    """
    straight = options.assume_straight_pages
    on_device = _on_device(options, reco_predictor)
    shared = _shared_upload(det_predictor, reco_predictor) if on_device else None
    detect = DetectStage(det_predictor, device=shared, photo_predictor=photo_predictor)
    stages: list[tuple[str, Callable]] = [
        ("read", read_stage),
        *([("rectify", RectifyStage())] if options.rectify else []),
        ("text_layer", TextLayerStage(options.pdf_text)),
        ("polarity", PolarityStage()),
    ]
    if options.detect_orientation:
        stages.append(("orientation", OrientationStage(detect, reco_predictor)))
    if options.photo.mode == "on":  # every page is a photo: the photo detector alone reads it
        stages.append(("photo", PhotoStage(options.photo, detect)))
    stages.append(("detect", detect))
    if options.photo.mode != "on" and options.text_scale.trigger > 0:
        from vision.predictors.detection.predictor import DetectionPredictor

        if isinstance(det_predictor, DetectionPredictor):  # it takes zooms; a predictor of yours may not
            stages.append(("text_scale", TextScaleStage(options.text_scale, detect, det_predictor.shapes)))
    if options.photo.mode == "auto":  # judges pages on the words text_scale found
        stages.append(("photo", PhotoStage(options.photo, detect)))
    if not straight:
        stages.append(("deskew", DeskewStage(detect)))
    if on_device:
        from vision.pipelines.ocr.device import DeviceRecognizeStage

        stages.append(("recognize", DeviceRecognizeStage(reco_predictor, straight=straight)))
    else:
        stages += [("crop", CropStage(straight=straight)), ("recognize", RecognizeStage(reco_predictor))]
    if options.outlines:
        from vision.pipelines.ocr.curved import CurvedStage

        stages.append(("curved", CurvedStage(reco_predictor)))
    if options.show_through.ratio > 0:
        stages.append(("show_through", ShowThroughStage(options.show_through)))
    photo_sparse = SparseOptions(max_words=options.photo.sparse_words) if options.photo.mode != "off" else None
    if options.sparse.max_words > 0 or (photo_sparse is not None and photo_sparse.max_words > 0):
        stages.append(("sparse", SparseStage(options.sparse, photos=photo_sparse)))
    if options.check_script:
        from vision.pipelines.ocr.script import ScriptStage

        lexicon = getattr(getattr(reco_predictor, "lexicon", None), "words", None)
        if lexicon is None:  # a recognizer without a lexicon: dictionary readings are still Latin evidence
            from vision.predictors.recognition.lexicon import load_lexicon

            lexicon = load_lexicon("en").words
        from vision.predictors.recognition.script import load_script_classifier

        stages.append(("script", ScriptStage(load_script_classifier(onnx=options.onnx), lexicon=lexicon)))
    stages.append(
        ("layout", LayoutStage(options.layout, straight=straight, straighten_pages=options.straighten_pages))
    )
    if options.structure.kinds or options.structure.tables or options.structure.figures:
        from vision.pipelines.ocr.structure import StructureStage

        stages.append(("structure", StructureStage(options.structure, layout_regions=options.layout.regions)))
    return Pipeline(stages)


def gpu_defaults(options: OCROptions) -> tuple[torch.dtype, bool]:
    """The dtype and ``compile`` the models are built with: the options' own, else bfloat16 eager on CUDA
    and float32 eager (onnxruntime) elsewhere. ``onnx=True`` keeps float32 eager exports.

    On an H100 through the public API (``docs/benchmarks.md``), bfloat16 read 17.7 pages/s against 15.0 in
    float32; compiling added 6% (18.7) for a 45 s warm-up that every process pays, so it is opt-in."""
    from vision.predictors._device import pick_device

    cuda = pick_device(options.device).type == "cuda" and not options.onnx
    dtype = options.dtype or (torch.bfloat16 if cuda else torch.float32)
    return dtype, bool(options.compile)


GPU_SIZES = {"det_batch_size": 16, "reco_batch_size": 1024, "pages_per_batch": 64}
"""Batch sizes on CUDA where the options leave the CPU defaults (``benchmarks/gpu_throughput.py``'s)."""


def gpu_sizes(options: OCROptions) -> OCROptions:
    """``options`` with :data:`GPU_SIZES` for the sizes left at their (CPU) defaults, on CUDA."""
    from dataclasses import fields

    from vision.predictors._device import pick_device

    if pick_device(options.device).type != "cuda":
        return options
    defaults = {f.name: f.default for f in fields(OCROptions) if f.name in GPU_SIZES}
    return replace(options, **{k: v for k, v in GPU_SIZES.items() if getattr(options, k) == defaults[k]})


def ocr_predictor(
    det_arch: str | None = None,
    reco_arch: str | None = None,
    *,
    options: OCROptions | None = None,
    det_predictor: Callable | None = None,
    reco_predictor: Callable | None = None,
    **settings: Any,
) -> OCRPredictor:
    """Build the end-to-end OCR predictor.

    Args:
        det_arch, reco_arch: registered architectures (``None``: the registry defaults).
        options: every setting (:class:`OCROptions`); ``settings`` are fields of it that override it
            (``ocr_predictor(device="cuda", detect_orientation=True)``).
        det_predictor, reco_predictor: prebuilt predictors (any callables with the detection and
            recognition predictor contracts) used instead of building them.

    Models load the shipped offline weights; ``det_weights=None, reco_weights=None`` build random models
    (tests).

    Raises:
        TypeError: for a setting that is not a field of :class:`OCROptions`.
        vision.errors.WeightsError: when the default weights are not installed.
    """
    options = options_with(options, det_arch=det_arch, reco_arch=reco_arch, **settings)
    options = gpu_sizes(options)
    o = options
    dtype, compile = gpu_defaults(o)
    own_detector = det_predictor is None
    if det_predictor is None:
        from vision.predictors.detection.predictor import detection_predictor

        det_predictor = detection_predictor(
            o.det_arch, weights=o.det_weights, device=o.device, dtype=dtype, batch_size=o.det_batch_size,
            assume_straight_pages=o.assume_straight_pages, onnx=o.onnx, shapes=o.det_input_shapes,
            compile=compile, outlines=o.outlines, cuda_graphs=o.cuda_graphs)
    if reco_predictor is None:
        from vision.predictors.recognition.predictor import recognition_predictor

        reco_predictor = recognition_predictor(
            o.reco_arch, weights=o.reco_weights, device=o.device, dtype=dtype, batch_size=o.reco_batch_size,
            onnx=o.onnx, lang=o.lang, compile=compile, cuda_graphs=o.cuda_graphs,
            slanted=False)  # photos only: RecognizeStage
    photo_predictor = None
    if own_detector and _photo_detector(o):  # built on the first photo: documents never load it
        from functools import partial

        from vision.pipelines.ocr.photo import LazyDetector
        from vision.predictors.detection.predictor import detection_predictor

        photo_predictor = LazyDetector(partial(
            detection_predictor, o.photo.det_arch, weights="default", device=o.device, dtype=dtype,
            batch_size=o.det_batch_size, onnx=o.onnx, shapes=o.det_input_shapes, compile=compile,
            cuda_graphs=o.cuda_graphs),
            straight=o.assume_straight_pages, outlines=o.outlines)
    pool = None
    if options.replicas > 1:
        from vision.pipelines.ocr.replicas import ReplicaPool

        pool = ReplicaPool(options, options.replicas)
    return OCRPredictor(build_pipeline(options, det_predictor, reco_predictor, photo_predictor), options, pool)


def _photo_detector(options: OCROptions) -> bool:
    """Whether pages the gate calls photos get their own detector: the gate is on, a photo detector is named,
    and the pages' detector is the default one with its shipped weights (a chosen detector is never swapped)."""
    from vision.predictors.detection.predictor import default_detector

    o = options
    return (o.photo.mode != "off" and o.photo.det_arch is not None and o.det_weights == "default"
            and o.det_arch in (None, default_detector()))
