"""One open PDF in this process, through pypdfium2: page sizes, rendering with text layer, text probe.

PDFium is not thread-safe, so every call goes through one process-wide lock. Servers keep that lock out
of their own process by running this class in a worker (:mod:`vision.io.pdf_worker`), one per document.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from vision.errors import CorruptFile, PasswordRequired, UnsupportedFormat, VisionError
from vision.io.page import TextLayerWord
from vision.io.pdf_text import page_has_text, text_layer_words

__all__ = ["LocalPdf", "open_error"]

_PDFIUM_LOCK = threading.RLock()


def open_error(exc: Exception, name: str, password: str | None) -> VisionError:
    """The VisionError for a PDFium failure to open a document."""
    from pypdfium2 import raw

    code = getattr(exc, "err_code", None)
    if code == raw.FPDF_ERR_PASSWORD:
        return PasswordRequired(
            name,
            "encrypted PDF: wrong password"
            if password
            else "encrypted PDF: a password is required (password=...)",
        )
    if code == raw.FPDF_ERR_SECURITY:
        return UnsupportedFormat(name, "PDF uses an unsupported security handler")
    return CorruptFile(name, f"damaged PDF, cannot be opened ({exc})")


class LocalPdf:
    """A PDF opened in this process from a path or bytes; raises VisionErrors naming ``name``.

    ``limits`` is accepted for symmetry with :class:`~vision.io.pdf_worker.PdfWorker` and unused: in
    this process nothing bounds PDFium's time or memory.
    """

    def __init__(self, data: str | bytes, name: str, password: str | None, limits: Any = None) -> None:
        import pypdfium2 as pdfium

        self.name = name
        with _PDFIUM_LOCK:
            try:
                self._pdf = pdfium.PdfDocument(data, password=password)
            except pdfium.PdfiumError as exc:
                raise open_error(exc, name, password) from None

    def __len__(self) -> int:
        with _PDFIUM_LOCK:
            return len(self._pdf)

    def page_size(self, index: int) -> tuple[float, float]:
        """``(width, height)`` of page ``index`` in points."""
        with _PDFIUM_LOCK:
            try:
                return tuple(self._pdf.get_page_size(index))  # type: ignore[return-value]
            except Exception as exc:
                raise CorruptFile(self.name, f"page {index} is damaged ({exc})") from None

    def _page(self, index: int) -> Any:
        if self._pdf.raw is None:
            raise ValueError(f"{self.name}: document is closed")
        try:
            return self._pdf[index]
        except Exception as exc:
            raise CorruptFile(self.name, f"page {index} cannot be loaded ({exc})") from None

    def render(self, index: int, scale: float) -> tuple[np.ndarray, list[TextLayerWord]]:
        """Page ``index`` as RGB uint8 ``(H, W, 3)`` at ``scale`` pixels per point, and its text layer."""
        with _PDFIUM_LOCK:
            page = self._page(index)
            try:
                bitmap = page.render(scale=scale, rev_byteorder=True)
                rgb = np.array(bitmap.to_numpy()[..., :3], dtype=np.uint8, order="C")
                bitmap.close()
                return rgb, text_layer_words(page)
            except VisionError:
                raise
            except Exception as exc:
                raise CorruptFile(self.name, f"page {index} cannot be rendered ({exc})") from None
            finally:
                page.close()

    def has_text(self, index: int) -> bool:
        """Whether page ``index`` carries a text layer."""
        with _PDFIUM_LOCK:
            page = self._page(index)
            try:
                return page_has_text(page)
            finally:
                page.close()

    def close(self) -> None:
        with _PDFIUM_LOCK:
            if getattr(self, "_pdf", None) is not None and self._pdf.raw is not None:
                self._pdf.close()
