"""`DocumentFile`: a lazy sequence of `PageImage` read from images, a PDF or a video."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import Any, Iterator, Sequence

from vision.errors import UnsupportedFormat
from vision.io._source import FileSource, read_head, source_name
from vision.io.page import PageImage
from vision.io.sniff import describe_unsupported, kind_of, sniff_format
from vision.settings import DEFAULT_LIMITS, Limits

__all__ = ["DocumentFile"]


class DocumentFile(ABC):
    """Pages (or video frames) of one input, decoded one at a time on iteration.

    Build one with :meth:`from_images`, :meth:`from_pdf`, :meth:`from_video` or :meth:`from_path`.
    Iterating yields :class:`~vision.io.page.PageImage` objects (RGB uint8 ``(H, W, 3)`` plus metadata);
    nothing is decoded before it is asked for, so a 2,000-page PDF or an hour of video never sits in
    memory at once. Use it as a context manager (or call :meth:`close`) to release open files early.

    Attributes:
        source: name of the input (a path, ``"<bytes>"``, ``"<array>"``, ...).
        kind: ``"image"``, ``"pdf"`` or ``"video"``.
        limits: the :class:`~vision.settings.Limits` applied while reading.
    """

    kind: str = ""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits

    @abstractmethod
    def __iter__(self) -> Iterator[PageImage]:
        """Decode and yield pages in order."""

    @abstractmethod
    def __len__(self) -> int:
        """Number of pages (selected PDF pages, image pages) or sampled video frames."""

    def __getitem__(self, index: int) -> PageImage:
        """Decode page ``index`` (negative indices count from the end); not available for video."""
        raise TypeError(f"{type(self).__name__} does not support indexing; iterate over it instead")

    def page_pixels(self, index: int) -> int:
        """Pixels (width * height) page ``index`` decodes to, known from headers before decoding.

        Lets callers reserve memory for a page before they decode it (see :mod:`vision.io.budget`).
        """
        raise TypeError(f"{type(self).__name__} does not know page sizes before decoding")

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Metadata read without decoding pages: format, page or frame counts, sizes (JSON-able)."""

    def close(self) -> None:  # noqa: B027  (readers without open state keep this no-op)
        """Release open files and decoder state (idempotent)."""

    def __enter__(self) -> "DocumentFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(source={self.source!r}, kind={self.kind!r}, pages={len(self)})"

    def _check_index(self, index: int) -> int:
        n = len(self)
        if not isinstance(index, int):
            raise TypeError(f"page index must be an int, got {type(index).__name__}")
        if not -n <= index < n:
            raise IndexError(f"{self.source}: page {index} out of range (document has {n})")
        return index % n

    # ------------------------------------------------------------------ factories
    @classmethod
    def from_images(cls, sources: Sequence[Any] | Any, *, limits: Limits | None = None) -> "DocumentFile":
        """Pages from images: paths, bytes, binary file objects, numpy arrays or PIL images.

        PNG, JPEG, WebP, BMP, GIF (first frame) and TIFF (every page) are read; a single source may be
        given without a list. Headers are checked (format, page count, pixel limits) before any decoding.
        """
        from vision.io.image import ImageFile

        return ImageFile(sources, limits=limits or DEFAULT_LIMITS)

    @classmethod
    def from_pdf(
        cls,
        source: FileSource,
        *,
        dpi: float = 144,
        pages: Sequence[int] | int | None = None,
        password: str | None = None,
        limits: Limits | None = None,
    ) -> "DocumentFile":
        """Pages of a PDF rendered at ``dpi`` with pypdfium2, one at a time, with their text layer.

        ``pages`` selects 0-based page indices (negative counts from the end); ``password`` opens
        encrypted files (:class:`~vision.errors.PasswordRequired` when missing or wrong).
        """
        from vision.io.pdf import PdfFile

        return PdfFile(source, dpi=dpi, pages=pages, password=password, limits=limits or DEFAULT_LIMITS)

    @classmethod
    def from_video(
        cls,
        source: FileSource,
        *,
        fps: float | None = None,
        start: float | None = None,
        end: float | None = None,
        max_frames: int | None = None,
        device: str = "cpu",
        limits: Limits | None = None,
    ) -> "DocumentFile":
        """Frames of a video with their presentation timestamps, decoded in small chunks by torchcodec.

        With ``fps`` the frames shown at ``start, start + 1/fps, ...`` are returned (exact on variable
        frame rate); without it every frame whose timestamp lies in ``[start, end)``. ``max_frames``
        keeps the first frames only; ``device="cuda"`` decodes on the GPU ("auto": when available).
        """
        from vision.io.video import VideoFile

        return VideoFile(
            source,
            fps=fps,
            start=start,
            end=end,
            max_frames=max_frames,
            device=device,
            limits=limits or DEFAULT_LIMITS,
        )

    @classmethod
    def from_path(cls, source: FileSource, **kwargs: Any) -> "DocumentFile":
        """Open a file (path, bytes or binary file object) by sniffing its magic bytes, not its name.

        Keyword arguments go to the reader chosen (e.g. ``dpi``/``pages`` for PDFs, ``fps`` for video);
        arguments that the chosen reader does not take are ignored, names no reader takes are errors.
        """
        limits = kwargs.get("limits") or DEFAULT_LIMITS
        readers = {"image": cls.from_images, "pdf": cls.from_pdf, "video": cls.from_video}
        known = {p for r in readers.values() for p in inspect.signature(r).parameters} - {"source", "sources"}
        if unknown := set(kwargs) - known:
            raise TypeError(f"from_path() got unexpected keyword arguments: {sorted(unknown)}")
        head, source = read_head(source, limits)
        fmt = sniff_format(head)
        kind = kind_of(fmt)
        if kind is None:
            raise UnsupportedFormat(source_name(source), describe_unsupported(fmt))
        reader = readers[kind]
        accepted = inspect.signature(reader).parameters
        return reader(source, **{k: v for k, v in kwargs.items() if k in accepted})
