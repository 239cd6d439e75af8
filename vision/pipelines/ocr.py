"""End-to-end OCR: ``ocr_predictor()`` and the stages it composes.

    read -> text_layer -> (orientation) -> detect -> (deskew) -> crop -> recognize -> script -> layout
    =>  Document

The stages themselves are in :mod:`vision.pipelines.stages`.

Each stage is a callable over a batch of :class:`~vision.pipelines.base.PageState`; swap one by name with
``predictor.pipeline = predictor.pipeline.replace("detect", my_stage)``. The predictor feeds pages in batches
of ``pages_per_batch`` (pages are read by a background thread while the models run), and recognition reads
the crops of all pages of a batch in one call, so its batches stay full whatever the words per page.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from vision.pipelines._prefetch import prefetch
from vision.pipelines.base import Pipeline, as_pages, chunked
from vision.pipelines.layout import LayoutOptions
from vision.pipelines.orientation import DeskewStage, OrientationStage
from vision.pipelines.polarity import PolarityStage
from vision.pipelines.stages import (
    CropStage,
    DetectStage,
    LayoutStage,
    RecognizeStage,
    read_stage,
    split_spaced,
)
from vision.pipelines.text_layer import PdfTextMode, TextLayerStage
from vision.structures import Document, Page

__all__ = [
    "OCROptions",
    "OCRPredictor",
    "ocr_predictor",
    "read_stage",
    "DetectStage",
    "CropStage",
    "RecognizeStage",
    "LayoutStage",
    "split_spaced",
]


@dataclass(frozen=True)
class OCROptions:
    """Every setting of the OCR predictor, typed (names follow docTR's where the meaning is the same).

    Attributes:
        det_arch, reco_arch: registered architectures (``None``: the registry defaults).
        det_weights, reco_weights: ``"default"`` (shipped), a safetensors path, or ``None`` (random, tests).
        device: ``"cpu"``, ``"cuda"``, ... (``None``: CUDA when available).
        dtype: model dtype (``None``: float32).
        det_batch_size: pages per detection forward pass.
        reco_batch_size: crops per recognition forward pass.
        pages_per_batch: pages that go through the stages together (bounds memory on long documents).
        assume_straight_pages: straight word boxes; ``False`` detects rotated quads, cuts them upright and
            groups lines on the deskewed page (skew up to about 10 degrees, rotated lines).
        detect_orientation: turn pages rotated by 90, 180 or 270 degrees upright first.
        straighten_pages: report geometry on the upright page (and keep that image) instead of mapping it
            back onto the page as given.
        pdf_text: ``"auto"``, ``"ocr"`` or ``"layer"`` (see :mod:`vision.pipelines.text_layer`).
        layout: thresholds of the line/block/reading-order rules and non-text regions.
        crops_on_device: cut and recognise crops on the recognizer's device
            (:mod:`vision.pipelines.device`); ``None``: when it runs on a GPU.
        onnx: run both models with onnxruntime (exported once per weights and cached);
            ``None``: on CPU in float32 when onnxruntime is installed; ``False``: eager PyTorch.
        lang: the documents' languages (``"de"``, ``"de+fr"``; :mod:`vision.models.recognition.languages`):
            picks the recognizer's lexicons (and a language-specific model when one ships); ``None``: English
            lexicon, Latin-script model.
        check_script: flag words in a script no shipped recognizer reads (low confidence, page warning).
    """

    det_arch: str | None = None
    reco_arch: str | None = None
    det_weights: str | None = "default"
    reco_weights: str | None = "default"
    device: str | None = None
    dtype: torch.dtype | None = None
    det_batch_size: int = 4
    reco_batch_size: int = 256
    pages_per_batch: int = 16
    assume_straight_pages: bool = True
    detect_orientation: bool = False
    straighten_pages: bool = False
    pdf_text: PdfTextMode = "auto"
    layout: LayoutOptions = field(default_factory=LayoutOptions)
    crops_on_device: bool | None = None
    onnx: bool | None = None
    lang: str | None = None
    check_script: bool = True

    def __post_init__(self) -> None:
        for name in ("det_batch_size", "reco_batch_size", "pages_per_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")


class OCRPredictor:
    """``predictor(doc) -> Document`` for a ``DocumentFile``, ``PageImage`` objects or numpy pages.

    Attributes:
        pipeline: the stages (replace one to change the behaviour).
        options: the settings it was built with.
    """

    def __init__(self, pipeline: Pipeline, options: OCROptions) -> None:
        self.pipeline, self.options = pipeline, options

    def __call__(self, doc: Any) -> Document:
        pages: list[Page] = []
        for batch in prefetch(chunked(as_pages(doc), self.options.pages_per_batch)):
            pages.extend(self.pipeline(batch))
        return Document(pages=pages, source=getattr(doc, "source", None))

    def __repr__(self) -> str:
        return f"OCRPredictor({self.pipeline!r})"

    def with_lang(self, lang: str | None) -> OCRPredictor:
        """A predictor sharing this one's models whose recognizer decodes with ``lang``'s lexicons (the REST
        API's per-request ``lang``). Raises ``ValueError`` for an unknown language or a recognizer that
        takes no lexicon."""
        from dataclasses import replace

        from vision.models.recognition.languages import lexicon_for, parse_lang

        if parse_lang(lang) == parse_lang(self.options.lang):
            return self
        reco = self.pipeline["recognize"].predictor
        if not hasattr(reco, "with_lexicon"):
            raise ValueError("this predictor's recognizer takes no lexicon: lang cannot change per call")
        clone = copy.copy(self.pipeline["recognize"])
        clone.predictor = reco.with_lexicon(lexicon_for(lang))
        pipeline = self.pipeline.replace("recognize", clone)
        if "script" in pipeline.names:
            script = copy.copy(pipeline["script"])
            script.lexicon = clone.predictor.lexicon.words
            pipeline = pipeline.replace("script", script)
        return OCRPredictor(pipeline, replace(self.options, lang=lang))


def _on_device(options: OCROptions, reco_predictor: Callable) -> bool:
    """Whether crops are cut on the recognizer's device (a recognition predictor on a GPU, unless told)."""
    from vision.models.recognition.predictor import RecognitionPredictor

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
    from vision.models.detection.predictor import DetectionPredictor

    if isinstance(det_predictor, DetectionPredictor) and det_predictor.resize == "device":
        if det_predictor.device == reco_predictor.device:  # type: ignore[attr-defined]
            return det_predictor.device
    return None


def build_pipeline(options: OCROptions, det_predictor: Callable, reco_predictor: Callable) -> Pipeline:
    """The standard stages for ``options`` around a detection and a recognition predictor.

    With crops on the device, one ``recognize`` stage cuts and reads (:mod:`vision.pipelines.device`).
    """
    straight = options.assume_straight_pages
    on_device = _on_device(options, reco_predictor)
    shared = _shared_upload(det_predictor, reco_predictor) if on_device else None
    detect = DetectStage(det_predictor, device=shared)
    stages: list[tuple[str, Callable]] = [
        ("read", read_stage),
        ("text_layer", TextLayerStage(options.pdf_text)),
        ("polarity", PolarityStage()),
    ]
    if options.detect_orientation:
        stages.append(("orientation", OrientationStage(detect, reco_predictor)))
    stages.append(("detect", detect))
    if not straight:
        stages.append(("deskew", DeskewStage(detect)))
    if on_device:
        from vision.pipelines.device import DeviceRecognizeStage

        stages.append(("recognize", DeviceRecognizeStage(reco_predictor, straight=straight)))
    else:
        stages += [("crop", CropStage(straight=straight)), ("recognize", RecognizeStage(reco_predictor))]
    if options.check_script:
        from vision.pipelines.script_stage import ScriptStage

        lexicon = getattr(getattr(reco_predictor, "lexicon", None), "words", None)
        if lexicon is None:  # a recognizer without a lexicon: dictionary readings are still Latin evidence
            from vision.models.recognition.lexicon import load_lexicon

            lexicon = load_lexicon("en").words
        stages.append(("script", ScriptStage(lexicon=lexicon)))
    stages.append(
        ("layout", LayoutStage(options.layout, straight=straight, straighten_pages=options.straighten_pages))
    )
    return Pipeline(stages)


def ocr_predictor(
    det_arch: str | None = None,
    reco_arch: str | None = None,
    *,
    det_weights: str | None = "default",
    reco_weights: str | None = "default",
    det_predictor: Callable | None = None,
    reco_predictor: Callable | None = None,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    assume_straight_pages: bool = True,
    detect_orientation: bool = False,
    straighten_pages: bool = False,
    pdf_text: PdfTextMode = "auto",
    det_batch_size: int = 4,
    reco_batch_size: int = 256,
    pages_per_batch: int = 16,
    layout: LayoutOptions | None = None,
    crops_on_device: bool | None = None,
    onnx: bool | None = None,
    lang: str | None = None,
    check_script: bool = True,
) -> OCRPredictor:
    """Build the end-to-end OCR predictor (the settings are those of :class:`OCROptions`).

    Models load the shipped offline weights; ``det_weights=None, reco_weights=None`` build random models
    (tests), and ``det_predictor`` / ``reco_predictor`` take prebuilt predictors (any callables with the
    detection and recognition predictor contracts) instead of building them.

    Raises:
        vision.errors.WeightsError: when the default weights are not installed.
    """
    options = OCROptions(
        det_arch=det_arch,
        reco_arch=reco_arch,
        det_weights=det_weights,
        reco_weights=reco_weights,
        device=None if device is None else str(device),
        dtype=dtype,
        det_batch_size=det_batch_size,
        reco_batch_size=reco_batch_size,
        pages_per_batch=pages_per_batch,
        assume_straight_pages=assume_straight_pages,
        detect_orientation=detect_orientation,
        straighten_pages=straighten_pages,
        pdf_text=pdf_text,
        layout=layout or LayoutOptions(),
        crops_on_device=crops_on_device,
        onnx=onnx,
        lang=lang,
        check_script=check_script,
    )
    if pdf_text not in ("auto", "ocr", "layer"):
        raise ValueError(f"pdf_text must be 'auto', 'ocr' or 'layer', got {pdf_text!r}")
    if det_predictor is None:
        from vision.models.detection.predictor import detection_predictor

        det_predictor = detection_predictor(
            det_arch,
            weights=det_weights,
            device=device,
            dtype=dtype,
            batch_size=det_batch_size,
            assume_straight_pages=assume_straight_pages,
            onnx=onnx,
        )
    if reco_predictor is None:
        from vision.models.recognition.predictor import recognition_predictor

        reco_predictor = recognition_predictor(
            reco_arch, weights=reco_weights, device=device, dtype=dtype, batch_size=reco_batch_size, onnx=onnx,
            lang=lang,
        )
    return OCRPredictor(build_pipeline(options, det_predictor, reco_predictor), options)
