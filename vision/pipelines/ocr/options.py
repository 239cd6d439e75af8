"""The OCR product's one options type, and the mappings of the interfaces onto it.

:class:`OCROptions` holds every setting of :func:`vision.ocr_predictor`. The Python API takes its fields as
keyword arguments (:func:`options_with`), the CLI maps its flags onto it (:func:`add_model_arguments`,
:func:`options_from_args`) and the service its settings (``ModelSettings.ocr_options``). Weights are
``"default"`` (shipped), a safetensors path, or ``None`` for random initialisation, spelled ``random`` in
text (flags, settings files; :func:`parse_weights`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal

from vision.pipelines.ocr.photo import PhotoOptions
from vision.pipelines.ocr.reading_order import LayoutOptions
from vision.pipelines.ocr.show_through import ShowThroughOptions
from vision.pipelines.ocr.sparse import SparseOptions
from vision.pipelines.ocr.structure import StructureOptions
from vision.pipelines.ocr.text_scale import OFF as TEXT_SCALE_OFF
from vision.pipelines.ocr.text_scale import TextScale

if TYPE_CHECKING:
    import torch

PdfTextMode = Literal["auto", "ocr", "layer"]

__all__ = [
    "OCROptions",
    "add_model_arguments",
    "options_from_args",
    "options_with",
    "orientation_changes",
    "parse_weights",
]

RANDOM = "random"
"""How text (flags, settings) spells randomly initialised weights (``None`` in Python)."""


@dataclass(frozen=True)
class OCROptions:
    """Every setting of the OCR predictor, typed (names follow docTR's where the meaning is the same).

    Attributes:
        det_arch, reco_arch: registered architectures (``None``: the registry defaults).
        det_weights, reco_weights: ``"default"`` (shipped), a safetensors path, or ``None`` (random, tests).
        device: ``"cpu"``, ``"cuda"``, ... (``None``: CUDA when available).
        dtype: model dtype (``None``: bfloat16 on CUDA, float32 elsewhere).
        compile: ``torch.compile`` both models (``None``: off; static, bucketed shapes on CUDA, see
            :mod:`vision.predictors.detection.predictor` and :mod:`vision.predictors.recognition.predictor`).
        cuda_graphs: replay the eager CUDA models from one CUDA graph per input shape
            (:mod:`vision.fast.cuda_graphs`; ``None``: on CUDA in a process that has the GPU to itself,
            off in each of several replicas sharing one: ``docs/benchmarks.md``).
        det_batch_size: pages per detection forward pass (sizes left at their defaults become
            ``GPU_SIZES`` of :mod:`vision.pipelines.ocr.predictor` on CUDA: 16, 1024 and 64).
        det_input_shapes: static ``(height, width)`` detector inputs (``None``: the predictor's, 1024 px).
        reco_batch_size: crops per recognition forward pass.
        pages_per_batch: pages that go through the stages together (bounds memory on long documents).
        assume_straight_pages: straight word boxes; ``False`` detects rotated quads, cuts them upright and
            groups lines on the deskewed page (skew up to about 10 degrees, rotated lines).
        outlines: give each word its detected region as a polygon of 4 to 32 points (``Word.outline``), which
            follows text on a curved baseline where the box and the rotated quad cannot.
        detect_orientation: turn pages rotated by 90, 180 or 270 degrees upright first.
        straighten_pages: report geometry on the upright page (and keep that image) instead of mapping it
            back onto the page as given.
        pdf_text: ``"auto"``, ``"ocr"`` or ``"layer"`` (see :mod:`vision.pipelines.ocr.text_layer`).
        rectify: rectify photographed pages first (:class:`~vision.pipelines.ocr.rectify.RectifyStage`,
            OpenCV page finder); geometry, dimensions and ``Page.image`` are then those of the rectified page.
        layout: thresholds of the line/block/reading-order rules and non-text regions.
        structure: tables and block kinds (:mod:`vision.pipelines.ocr.structure`); both can be switched off.
        crops_on_device: cut and recognise crops on the recognizer's device
            (:mod:`vision.pipelines.ocr.device`); ``None``: when it runs on a GPU.
        onnx: run the models with onnxruntime (exported once per weights and cached);
            ``None``: on CPU in float32 when onnxruntime is installed (and always for the script classifier,
            which runs on the CPU); ``False``: eager PyTorch.
        lang: the documents' languages (``"de"``, ``"de+fr"``; :mod:`vision.predictors.recognition.languages`):
            picks the recognizer's lexicons (and a language-specific model when one ships); ``None``: English
            lexicon, Latin-script model.
        check_script: flag words in a script no shipped recognizer reads (low confidence, page warning).
        show_through: drop the faint text that shows through thin paper from the next sheet or the back of the
            page (:mod:`vision.pipelines.ocr.show_through`; not on photos); ``ShowThroughOptions(ratio=0)``
            keeps it.
        sparse: on every page with few readings, drop lone symbols and single characters
            (:mod:`vision.pipelines.ocr.sparse`); off by default (photos get the rule through ``photo``).
        photo: the page-versus-photo gate (:mod:`vision.pipelines.ocr.photo`): pages it calls photos are
            detected with the photo detector and get the sparse rule; ``PhotoOptions(mode="off")`` reads every
            page as a document.
        text_scale: pages whose words the detector finds very large (close-ups) are detected again, shrunk
            to the word size it was trained on, before the photo gate
            (:mod:`vision.pipelines.ocr.text_scale`); ``TextScale(trigger=0)`` keeps one pass.
        replicas: processes that each build these models and read a share of every call's pages
            (:mod:`vision.pipelines.ocr.replicas`): on a GPU the host work between model calls then runs on
            that many cores; 1: this process only.
        model_server: the replicas' models run in one model server process on the device
            (:mod:`vision.predictors.remote`) instead of each replica holding its own.
    """

    det_arch: str | None = None
    reco_arch: str | None = None
    det_weights: str | None = "default"
    reco_weights: str | None = "default"
    device: str | None = None
    dtype: torch.dtype | None = None
    compile: bool | None = None
    cuda_graphs: bool | None = None
    det_batch_size: int = 4
    det_input_shapes: tuple[tuple[int, int], ...] | None = None
    reco_batch_size: int = 256
    pages_per_batch: int = 16
    assume_straight_pages: bool = True
    outlines: bool = False
    detect_orientation: bool = False
    straighten_pages: bool = False
    pdf_text: PdfTextMode = "auto"
    rectify: bool = False
    layout: LayoutOptions = field(default_factory=LayoutOptions)
    structure: StructureOptions = field(default_factory=StructureOptions)
    crops_on_device: bool | None = None
    onnx: bool | None = None
    lang: str | None = None
    check_script: bool = True
    show_through: ShowThroughOptions = field(default_factory=ShowThroughOptions)
    sparse: SparseOptions = field(default_factory=SparseOptions)
    photo: PhotoOptions = field(default_factory=PhotoOptions)
    text_scale: TextScale = field(default_factory=TextScale)
    replicas: int = 1
    model_server: bool = False

    def __post_init__(self) -> None:
        for name in ("det_batch_size", "reco_batch_size", "pages_per_batch", "replicas"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.pdf_text not in ("auto", "ocr", "layer"):
            raise ValueError(f"pdf_text must be 'auto', 'ocr' or 'layer', got {self.pdf_text!r}")
        if self.device is not None and not isinstance(self.device, str):
            object.__setattr__(self, "device", str(self.device))  # a torch.device: one spelling inside
        if self.det_input_shapes is not None:
            shapes = tuple((int(h), int(w)) for h, w in self.det_input_shapes)
            object.__setattr__(self, "det_input_shapes", shapes)


_FIELDS = frozenset(f.name for f in fields(OCROptions))


def options_with(base: OCROptions | None = None, **changes: Any) -> OCROptions:
    """``base`` (default :class:`OCROptions`) with ``changes``; ``None`` values of ``det_arch``/``reco_arch``
    keep the base's. ``layout=None`` / ``structure=None`` / ``sparse=None`` / ``photo=None`` mean the
    defaults; ``photo`` may also be a mode (``"auto"``, ``"on"``, ``"off"``).

    Raises:
        TypeError: for a name that is not a field of :class:`OCROptions`.
    """
    unknown = sorted(changes.keys() - _FIELDS)
    if unknown:
        raise TypeError(f"unknown OCR option(s) {', '.join(unknown)}; options are {', '.join(sorted(_FIELDS))}")
    for name in ("det_arch", "reco_arch"):
        if changes.get(name, 0) is None:
            del changes[name]
    if "layout" in changes and changes["layout"] is None:
        changes["layout"] = LayoutOptions()
    if "structure" in changes and changes["structure"] is None:
        changes["structure"] = StructureOptions()
    if "sparse" in changes and changes["sparse"] is None:
        changes["sparse"] = SparseOptions()
    if "photo" in changes and not isinstance(changes["photo"], PhotoOptions):
        changes["photo"] = PhotoOptions(**({"mode": changes["photo"]} if changes["photo"] else {}))
    return replace(base or OCROptions(), **changes)


def orientation_changes(
    *, detect_orientation: bool | None = None, rotated: bool | None = None, outlines: bool | None = None
) -> dict[str, bool]:
    """The :class:`OCROptions` fields behind the interfaces' page-geometry switches: the CLI's
    ``--detect-orientation`` / ``--rotated`` / ``--outlines`` and the REST API's ``orientation`` /
    ``rotated`` / ``outlines``.

    ``detect_orientation`` maps onto ``detect_orientation``, ``rotated`` onto ``assume_straight_pages=not
    rotated`` and ``outlines`` onto ``outlines``; ``None`` (not given) changes nothing.
    """
    changes: dict[str, bool] = {}
    if detect_orientation is not None:
        changes["detect_orientation"] = bool(detect_orientation)
    if rotated is not None:
        changes["assume_straight_pages"] = not rotated
    if outlines is not None:
        changes["outlines"] = bool(outlines)
    return changes


def parse_weights(text: str | None) -> str | None:
    """A weights option as text: ``random`` (also ``none``) means random initialisation (``None``)."""
    if text is None or text.lower() in (RANDOM, "none"):
        return None
    return text


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--det-arch``, ``--reco-arch``, ``--det-weights``, ``--reco-weights``, ``--device``,
    ``--precision``, ``--compile``, ``--sparse-words``, ``--show-through``, ``--photo``, ``--text-scale`` and
    ``-l/--lang``."""
    parser.add_argument("--det-arch", default=None, help="registered detection model (default: the default)")
    parser.add_argument("--reco-arch", default=None, help="registered recognition model (default: the default)")
    parser.add_argument("--det-weights", default="default", help="'default', a safetensors file, or 'random'")
    parser.add_argument("--reco-weights", default="default", help="'default', a safetensors file, or 'random'")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: CUDA when available)")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default=None,
                        help="model precision (default: bf16 on CUDA, fp32 elsewhere)")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                        help="torch.compile the models (default: off; a warm-up of about 45 s per process)")
    parser.add_argument(
        "--sparse-words", type=int, default=None, metavar="N",
        help="every page with fewer than N readings drops lone symbols and single characters (default 0: "
        "only on photos, see --photo; table crops lose real cells with it)")
    parser.add_argument(
        "--show-through", type=float, default=None, metavar="RATIO",
        help="drop words fainter than RATIO x the page's darkest text where they are a fifth of its words or "
        "more: the next sheet or the back of the page showing through thin paper (default 0.25; 0 keeps every "
        "word; photos are never touched)")
    parser.add_argument(
        "--photo", choices=("auto", "on", "off"), default=None,
        help="read photos (few words on a natural background) with the photo detector and drop lone "
        "glyphs there: auto (default) tells photos from documents, on treats every page as a photo, off none")
    parser.add_argument(
        "--text-scale", choices=("auto", "off"), default=None,
        help="detect pages whose words come out very large (close-up photos of receipts and documents) "
        "again, shrunk: auto (default) or off")
    parser.add_argument(
        "-l", "--lang", default=None,
        help="the documents' languages, e.g. de or de+fr (picks the lexicons; default: English lexicon, "
        "every Latin-script language read)")


def options_from_args(args: argparse.Namespace | Any, **changes: Any) -> OCROptions:
    """The :class:`OCROptions` of :func:`add_model_arguments`' flags (or of any object with the same
    ``det_arch``, ``reco_arch``, ``det_weights``, ``reco_weights``, ``device`` and optional ``lang``
    attributes, such as the service's model settings), with further ``changes``."""
    return options_with(
        det_arch=args.det_arch,
        reco_arch=args.reco_arch,
        det_weights=parse_weights(args.det_weights),
        reco_weights=parse_weights(args.reco_weights),
        device=args.device,
        **({"lang": args.lang} if getattr(args, "lang", None) else {}),
        **({"sparse": SparseOptions(max_words=args.sparse_words)}
           if getattr(args, "sparse_words", None) is not None else {}),
        **({"show_through": ShowThroughOptions(ratio=args.show_through)}
           if getattr(args, "show_through", None) is not None else {}),
        **({"photo": PhotoOptions(mode=args.photo)} if getattr(args, "photo", None) else {}),
        **({"text_scale": TEXT_SCALE_OFF} if getattr(args, "text_scale", None) == "off" else {}),
        **_speed(args),
        **changes,
    )


def _speed(args: Any) -> dict[str, Any]:
    """``dtype``/``compile`` of the ``--precision``/``--compile`` flags, when given."""
    import torch

    out: dict[str, Any] = {}
    if getattr(args, "precision", None):
        out["dtype"] = torch.bfloat16 if args.precision == "bf16" else torch.float32
    if getattr(args, "compile", None) is not None:
        out["compile"] = args.compile
    if getattr(args, "cuda_graphs", None) is not None:  # set for replicas sharing a GPU, not a flag
        out["cuda_graphs"] = args.cuda_graphs
    if getattr(args, "model_server", False):
        out["model_server"] = True
    return out
