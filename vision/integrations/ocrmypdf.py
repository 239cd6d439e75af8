"""An OCRmyPDF (17+) OCR engine plugin running our models: ``ocrmypdf --ocr-engine vision in.pdf out.pdf``.

Install with ``pip install 'vision-ocr[ocrmypdf]'``. The package registers this module under OCRmyPDF's
``ocrmypdf`` entry-point group, which adds ``vision`` to ``--ocr-engine``; Tesseract stays the default
engine. ``ocrmypdf --plugin vision.integrations.ocrmypdf`` loads it explicitly, and then ``vision`` is also
the engine of ``--ocr-engine auto``. OCRmyPDF 17 still checks that Tesseract is installed whatever the
engine (its built-in plugin's ``check_options``), so ``tesseract-ocr`` must be on the PATH.

The engine implements ``generate_ocr()``: each page image becomes an :class:`OcrElement` tree (page >
paragraph per block > line > word) with pixel boxes, word confidences, rotated word polygons and each
line's text angle, which OCRmyPDF renders into its text layer (``--pdf-renderer auto``, ``fpdf2``). For
``--pdf-renderer hocr`` it writes hOCR (``generate_hocr()``), and for ``sandwich`` a text-only PDF page
(``generate_pdf()``: :func:`vision.export.pdf_layer.text_only_pdf`) that OCRmyPDF lays over the page.
OCRmyPDF runs pages in worker processes: each worker builds the predictor once (on the first page it reads)
with ``1 / --jobs`` of the CPU threads, so ``--jobs N`` workers do not oversubscribe the cores.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from pathlib import Path
from typing import Any

from ocrmypdf import hookimpl
from ocrmypdf.hocrtransform import BoundingBox, OcrClass, OcrElement
from ocrmypdf.pluginspec import OcrEngine, OrientationConfidence

__all__ = ["VisionEngine", "EntryPoint", "page_to_element"]

ENGINE = "vision"
_LOCK = threading.Lock()  # with --use-threads, pages of one process share the predictor


def _threads(jobs: int | None) -> int:
    """CPU threads for one worker: the cores divided among ``jobs`` workers (OCRmyPDF's default: all)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // max(1, jobs or cores))


@functools.lru_cache(maxsize=2)
def _predictor(threads: int, detect_orientation: bool) -> Any:
    """The OCR predictor of this worker process (built once; onnxruntime takes its thread count here)."""
    import torch

    from vision.pipelines.ocr import ocr_predictor

    torch.set_num_threads(threads)
    return ocr_predictor(assume_straight_pages=False, detect_orientation=detect_orientation)


def _read(input_file: Path, options: Any, *, detect_orientation: bool = False) -> tuple[Any, float]:
    """OCR the page image; returns our ``Page`` and the image's resolution."""
    from vision.io import DocumentFile

    with DocumentFile.from_images([input_file]) as pages:
        page_image = pages[0]
        with _LOCK:
            doc = _predictor(_threads(getattr(options, "jobs", None)), detect_orientation)([page_image])
    return doc.pages[0], float(page_image.dpi or 300.0)


def _bbox(box: tuple[float, float, float, float], width: int, height: int) -> BoundingBox:
    x0, y0, x1, y1 = box
    return BoundingBox(left=x0 * width, top=y0 * height, right=x1 * width, bottom=y1 * height)


def _angle(polygon: Any, width: int, height: int) -> float:
    """Counter-clockwise angle in degrees of a polygon's top edge on the image (0 for none)."""
    if polygon is None:
        return 0.0
    (x0, y0), (x1, y1) = polygon[0], polygon[1]
    return -math.degrees(math.atan2((y1 - y0) * height, (x1 - x0) * width))


def page_to_element(page: Any, dpi: float, page_number: int) -> OcrElement:
    """Our :class:`~vision.structures.Page` as OCRmyPDF's element tree, in pixels of the page image."""
    height, width = page.dimensions
    root = OcrElement(
        ocr_class=OcrClass.PAGE, bbox=BoundingBox(0, 0, width, height), dpi=dpi, page_number=page_number
    )
    for block in page.blocks:
        lines = [line for line in block.lines if line.words]
        if not lines:
            continue
        paragraph = OcrElement(ocr_class=OcrClass.PARAGRAPH, bbox=_bbox(block.geometry, width, height))
        for line in lines:
            angles = [_angle(w.polygon, width, height) for w in line.words]
            element = OcrElement(
                ocr_class=OcrClass.LINE,
                bbox=_bbox(line.geometry, width, height),
                textangle=sorted(angles)[len(angles) // 2],
            )
            for word in line.words:
                poly = None if word.polygon is None else [(x * width, y * height) for x, y in word.polygon]
                element.children.append(
                    OcrElement(
                        ocr_class=OcrClass.WORD,
                        bbox=_bbox(word.geometry, width, height),
                        poly=poly,
                        text=word.value,
                        confidence=float(word.confidence),
                    )
                )
            paragraph.children.append(element)
        root.children.append(paragraph)
    return root


class VisionEngine(OcrEngine):
    """The ``vision`` OCR engine (DBNet detection, CRNN recognition, shipped weights)."""

    @staticmethod
    def version() -> str:
        from vision import __version__

        return __version__

    @staticmethod
    def creator_tag(options: Any) -> str:
        return f"vision {VisionEngine.version()}"

    def __str__(self) -> str:
        return f"vision {self.version()}"

    @staticmethod
    def languages(options: Any) -> set[str]:
        return {"eng"}  # the shipped recognizer reads Latin script; OCRmyPDF's default language is eng

    @staticmethod
    def get_orientation(input_file: Path, options: Any) -> OrientationConfidence:
        page, _ = _read(input_file, options, detect_orientation=True)
        # OCRmyPDF rotates pages whose confidence is over --rotate-pages-threshold (Tesseract units, 0-15)
        return OrientationConfidence(angle=page.orientation, confidence=15.0 if page.orientation else 0.0)

    @staticmethod
    def get_deskew(input_file: Path, options: Any) -> float:
        from vision.export.searchable import skew_angle

        page, _ = _read(input_file, options)
        return -skew_angle(page)  # OCRmyPDF: degrees counter-clockwise

    @staticmethod
    def supports_generate_ocr() -> bool:
        return True

    @staticmethod
    def generate_ocr(input_file: Path, options: Any, page_number: int = 0) -> tuple[OcrElement, str]:
        page, dpi = _read(input_file, options)
        return page_to_element(page, dpi, page_number), page.render()

    @staticmethod
    def generate_hocr(input_file: Path, output_hocr: Path, output_text: Path, options: Any) -> None:
        from vision.structures import Document

        page, _ = _read(input_file, options)
        doc = Document(pages=[page])
        Path(output_hocr).write_text(doc.export_hocr(), encoding="utf-8")
        Path(output_text).write_text(page.render(), encoding="utf-8")

    @staticmethod
    def generate_pdf(input_file: Path, output_pdf: Path, output_text: Path, options: Any) -> None:
        from vision.export.pdf_layer import text_only_pdf

        page, dpi = _read(input_file, options)
        Path(output_pdf).write_bytes(text_only_pdf(page, dpi))
        Path(output_text).write_text(page.render(), encoding="utf-8")


def _add_engine_choice(parser: Any) -> None:
    """Make ``vision`` a valid ``--ocr-engine`` value (OCRmyPDF lists its own engines as argparse choices)."""
    for action in getattr(parser, "_actions", []):
        if action.dest == "ocr_engine" and action.choices is not None and ENGINE not in action.choices:
            action.choices = [*action.choices, ENGINE]


@hookimpl
def add_options(parser: Any) -> None:
    _add_engine_choice(parser)


@hookimpl
def get_ocr_engine(options: Any) -> OcrEngine | None:
    """Loaded with ``--plugin``: ours for ``--ocr-engine vision`` and ``auto``."""
    engine = getattr(options, "ocr_engine", "auto") if options is not None else "auto"
    return VisionEngine() if engine in (ENGINE, "auto") else None


def _get_ocr_engine_by_name(options: Any) -> OcrEngine | None:
    engine = getattr(options, "ocr_engine", "auto") if options is not None else "auto"
    return VisionEngine() if engine == ENGINE else None


class EntryPoint:
    """What the ``ocrmypdf`` entry point loads: the same hooks, but only ``--ocr-engine vision`` selects us
    (an installed package must not take ``auto`` from Tesseract). A separate object from the module, so
    ``--plugin vision.integrations.ocrmypdf`` can still be registered next to it."""

    add_options = staticmethod(add_options)
    get_ocr_engine = staticmethod(hookimpl(_get_ocr_engine_by_name))
