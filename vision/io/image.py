"""Image reader: PNG, JPEG, WebP, BMP, GIF (first frame), TIFF (every page), arrays and PIL images."""

from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from vision.errors import CorruptFile, LimitExceeded, UnsupportedFormat, VisionError
from vision.io._convert import array_to_rgb, pil_to_rgb
from vision.io._source import check_path, is_file_source, read_bytes, read_head, source_name
from vision.io.document import DocumentFile
from vision.io.page import PageImage
from vision.io.sniff import IMAGE_FORMATS, describe_unsupported, kind_of, sniff_format
from vision.settings import EXPANSION_FREE_PIXELS, Limits

__all__ = ["ImageFile"]

# Pillow plugin names we let Pillow pick from (older Pillows open multi-picture JPEGs as "MPO").
PIL_FORMATS = ("PNG", "JPEG", "MPO", "GIF", "BMP", "DIB", "TIFF", "WEBP")


def _pil_formats() -> tuple[str, ...]:
    """The formats of :data:`PIL_FORMATS` this Pillow registers (after loading every plugin)."""
    Image.init()
    return tuple(f for f in PIL_FORMATS if f in Image.OPEN)


MULTI_PAGE = ("TIFF",)


@dataclass(frozen=True)
class _Entry:
    """One page to decode: where it comes from and which frame it is."""

    name: str
    frame: int
    size: tuple[int, int]  # (width, height) from the header
    opener: Callable[[], Image.Image] | None = None  # encoded file
    picture: np.ndarray | Image.Image | None = None  # in-memory input


def _check_pixels(size: tuple[int, int], name: str, limits: Limits, page: int) -> None:
    width, height = size
    if width <= 0 or height <= 0:
        raise CorruptFile(name, f"page {page} has an empty size {width}x{height}")
    if width * height > limits.max_pixels:
        raise LimitExceeded(
            name,
            f"page {page} is {width}x{height} = {width * height} pixels, over the limit of "
            f"{limits.max_pixels} (max_pixels)",
        )


def _open_pil(opener: Callable[[], Image.Image], name: str, fmt: str | None) -> Image.Image:
    """Open an image header with Pillow, translating its failures to VisionErrors."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our own limit decides
            return opener()
    except Image.DecompressionBombError as exc:
        raise LimitExceeded(name, f"image too large to open safely ({exc})") from None
    except Exception as exc:  # Pillow raises many types (OSError, SyntaxError, struct.error, ...)
        if fmt in IMAGE_FORMATS:
            detail = (
                "not identified by Pillow"
                if isinstance(exc, UnidentifiedImageError)
                else (f"{type(exc).__name__}: {exc}")
            )
            raise CorruptFile(name, f"damaged {fmt.upper()} header ({detail})") from None
        if kind_of(fmt) is not None:
            raise UnsupportedFormat(
                name, f"is a {fmt.upper()} file, not an image (use DocumentFile.from_path)"
            ) from None
        raise UnsupportedFormat(name, describe_unsupported(fmt)) from None


def _check_expansion(sizes: list[tuple[int, int]], nbytes: int, name: str, limits: Limits) -> None:
    """Refuse files whose headers promise far more pixels than their bytes can encode (bombs)."""
    pixels = sum(w * h for w, h in sizes)
    if pixels > EXPANSION_FREE_PIXELS and pixels > limits.max_expansion * nbytes:
        raise LimitExceeded(
            name,
            f"{nbytes} bytes claim {pixels} pixels in {len(sizes)} page(s), over {limits.max_expansion} "
            "pixels per byte (max_expansion): a decompression bomb",
        )


def _frame_sizes(im: Image.Image, name: str, limits: Limits) -> list[tuple[int, int]]:
    """``(width, height)`` of each page of an image, checking each page's size and stopping past the limit."""
    if im.format not in MULTI_PAGE:
        _check_pixels(im.size, name, limits, 0)
        return [im.size]
    sizes: list[tuple[int, int]] = []
    while True:
        count = len(sizes)
        try:
            im.seek(count)
        except EOFError:
            return sizes
        except Exception as exc:
            if count == 0:
                raise CorruptFile(name, f"damaged {im.format} ({type(exc).__name__}: {exc})") from None
            raise CorruptFile(
                name, f"damaged {im.format} page {count} ({type(exc).__name__}: {exc})"
            ) from None
        _check_pixels(im.size, name, limits, count)
        sizes.append(im.size)
        if len(sizes) > limits.max_pages:
            raise LimitExceeded(name, f"more than {limits.max_pages} pages (max_pages)")


def _file_entries(src: Any, limits: Limits) -> list[_Entry]:
    name = source_name(src)
    if isinstance(src, (str, os.PathLike)):
        path = check_path(src, limits)
        head, _ = read_head(path, limits)
        nbytes = os.stat(path).st_size
        opener: Callable[[], Image.Image] = lambda: Image.open(path, formats=_pil_formats())  # noqa: E731
    else:
        data = read_bytes(src, limits)
        head, nbytes = data[:64], len(data)
        opener = lambda: Image.open(io.BytesIO(data), formats=_pil_formats())  # noqa: E731
    im = _open_pil(opener, name, sniff_format(head))
    with im:
        sizes = _frame_sizes(im, name, limits)
    _check_expansion(sizes, nbytes, name, limits)
    return [_Entry(name, i, size, opener=opener) for i, size in enumerate(sizes)]


def _memory_entry(src: Any, limits: Limits) -> _Entry:
    if isinstance(src, Image.Image):
        _check_pixels(src.size, "<PIL image>", limits, 0)
        return _Entry("<PIL image>", 0, src.size, picture=src)
    arr = np.asarray(src)
    if arr.ndim < 2:
        raise UnsupportedFormat("<array>", f"expected an (H, W[, C]) image array, got shape {arr.shape}")
    _check_pixels((arr.shape[1], arr.shape[0]), "<array>", limits, 0)
    return _Entry("<array>", 0, (arr.shape[1], arr.shape[0]), picture=arr)


def _orient(im: Image.Image) -> Image.Image:
    """Apply the EXIF orientation of a loaded image; a damaged EXIF block leaves it as stored."""
    try:
        return ImageOps.exif_transpose(im)
    except Exception:  # unreadable EXIF is metadata damage, not a reason to lose the page
        return im


def _dpi(im: Image.Image) -> float | None:
    try:
        value = float(im.info.get("dpi", (0, 0))[0])
    except (TypeError, ValueError, IndexError, ZeroDivisionError):
        return None
    return value if 0 < value < 1e6 else None


class ImageFile(DocumentFile):
    """Pages from one or more images (see :meth:`DocumentFile.from_images`)."""

    kind = "image"

    def __init__(self, sources: Sequence[Any] | Any, *, limits: Limits) -> None:
        if is_file_source(sources) or isinstance(sources, (Image.Image, np.ndarray)):
            sources = [sources]
        sources = list(sources)
        entries: list[_Entry] = []
        for src in sources:
            if isinstance(src, (Image.Image, np.ndarray)):
                entries.append(_memory_entry(src, limits))
            elif is_file_source(src):
                entries.extend(_file_entries(src, limits))
            else:
                raise TypeError(f"cannot read an image from {type(src).__name__}")
            if len(entries) > limits.max_pages:
                raise LimitExceeded(
                    source_name(src), f"more than {limits.max_pages} pages in all (max_pages)"
                )
        if not entries:
            raise ValueError("from_images() needs at least one image")
        names = {e.name for e in entries}
        super().__init__(names.pop() if len(names) == 1 else f"{len(sources)} images", limits)
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[PageImage]:
        for index in range(len(self._entries)):
            yield self[index]

    def page_pixels(self, index: int) -> int:
        """Pixels page ``index`` decodes to (from its header; EXIF rotation keeps the count)."""
        width, height = self._entries[self._check_index(index)].size
        return width * height

    def __getitem__(self, index: int) -> PageImage:
        index = self._check_index(index)
        entry = self._entries[index]
        if isinstance(entry.picture, np.ndarray):
            return self._from_array(entry, index)
        if entry.picture is not None:
            return self._from_pil(entry.picture, entry, index)
        assert entry.opener is not None
        im = _open_pil(entry.opener, entry.name, None)
        with im:
            return self._from_pil(im, entry, index)

    def _from_array(self, entry: _Entry, index: int) -> PageImage:
        try:
            rgb = array_to_rgb(entry.picture)  # type: ignore[arg-type]
        except ValueError as exc:
            raise UnsupportedFormat(entry.name, str(exc)) from None
        return PageImage(rgb, entry.name, index, (rgb.shape[0], rgb.shape[1]))

    def _from_pil(self, im: Image.Image, entry: _Entry, index: int) -> PageImage:
        try:
            if entry.frame:
                im.seek(entry.frame)
            _check_pixels(im.size, entry.name, self.limits, entry.frame)
            im.load()
            rgb = pil_to_rgb(_orient(im))
        except VisionError:
            raise
        except Exception as exc:  # truncated data, bad compression, unsupported mode, out of memory, ...
            where = f" page {entry.frame}" if entry.frame else ""
            raise CorruptFile(
                entry.name, f"cannot decode {im.format or 'image'}{where} ({type(exc).__name__}: {exc})"
            ) from None
        return PageImage(rgb, entry.name, index, (rgb.shape[0], rgb.shape[1]), dpi=_dpi(im))

    def describe(self) -> dict[str, Any]:
        """Per page: source, frame, size; formats and modes come from the headers only."""
        pages = []
        for index, entry in enumerate(self._entries):
            info: dict[str, Any] = {"index": index, "source": entry.name, "frame": entry.frame}
            if entry.opener is not None:
                im = _open_pil(entry.opener, entry.name, None)
                with im:
                    if entry.frame:
                        im.seek(entry.frame)
                    info.update(
                        format=im.format, mode=im.mode, width=im.size[0], height=im.size[1], dpi=_dpi(im)
                    )
            elif isinstance(entry.picture, Image.Image):
                info.update(
                    format=None,
                    mode=entry.picture.mode,
                    width=entry.picture.size[0],
                    height=entry.picture.size[1],
                    dpi=None,
                )
            else:
                arr = entry.picture
                info.update(
                    format=None, mode=str(arr.dtype), width=arr.shape[1], height=arr.shape[0], dpi=None
                )
            pages.append(info)
        return {"source": self.source, "kind": self.kind, "pages": pages}
