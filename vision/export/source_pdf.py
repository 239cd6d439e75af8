"""Open the input of a searchable PDF as a pikepdf document: a PDF as it is, an image embedded losslessly.

Images go through img2pdf: JPEG and JPEG 2000 bytes are embedded as they are (no re-encoding), PNG and
TIFF pixels losslessly (PNG data passed through, CCITT G4 for bilevel TIFF), every frame of a multi-page
TIFF is a page, and each page is sized from the resolution the file declares (PNG pHYs, TIFF, JFIF), or
``default_dpi`` when it declares none. EXIF orientation becomes the page's ``/Rotate``. Images img2pdf
refuses (an alpha channel, some palettes) are first flattened onto white and stored as lossless PNG.
"""

from __future__ import annotations

import io

import pikepdf
from PIL import Image

from vision.errors import CorruptFile, PasswordRequired, UnsupportedFormat

__all__ = ["open_source_pdf", "image_to_pdf"]


def _declared_dpi(data: bytes) -> float | None:
    with Image.open(io.BytesIO(data)) as im:
        dpi = im.info.get("dpi")
    try:
        value = float(dpi[0]) if dpi else 0.0
    except (TypeError, ValueError, IndexError):
        return None
    return value if value >= 1 else None  # 0 or 1 dpi: "no resolution" in many writers


def _flatten(data: bytes) -> bytes:
    """PNG bytes of every frame of ``data`` composited onto white, without alpha (one frame: one PNG)."""
    with Image.open(io.BytesIO(data)) as im:
        dpi = im.info.get("dpi")
        rgba = im.convert("RGBA")
        flat = Image.new("RGB", rgba.size, "white")
        flat.paste(rgba, mask=rgba.getchannel("A"))
    out = io.BytesIO()
    flat.save(out, format="PNG", **({"dpi": dpi} if dpi else {}))
    return out.getvalue()


def image_to_pdf(data: bytes, name: str, *, default_dpi: float) -> bytes:
    """A PDF embedding the image ``data`` losslessly, one page per frame, sized from its resolution."""
    import img2pdf

    try:
        dpi = _declared_dpi(data)
    except Image.UnidentifiedImageError:
        raise UnsupportedFormat(name, "a searchable PDF is made from a PDF or an image") from None
    except Exception as exc:
        raise CorruptFile(name, f"damaged image ({exc})") from None
    options = {"rotation": img2pdf.Rotation.ifvalid}
    if not dpi:
        options["layout_fun"] = img2pdf.get_fixed_dpi_layout_fun((default_dpi, default_dpi))
    try:
        return img2pdf.convert(data, **options)
    except (img2pdf.AlphaChannelError, img2pdf.ImageOpenError, ValueError):
        pass  # an alpha channel or a mode img2pdf does not embed: flatten it
    try:
        return img2pdf.convert(_flatten(data), **options)
    except Exception as exc:
        raise CorruptFile(name, f"image cannot be embedded in a PDF ({exc})") from None


def open_source_pdf(
    data: bytes, name: str, *, password: str | None = None, default_dpi: float = 150.0
) -> pikepdf.Pdf:
    """``data`` (a PDF, or an image we read) as a pikepdf document; encryption is removed on save.

    Raises:
        PasswordRequired: an encrypted PDF without the right password.
        CorruptFile: a damaged PDF or image.
        UnsupportedFormat: neither a PDF nor an image.
    """
    if b"%PDF-" not in data[:1024]:  # PDF readers accept up to 1 KiB of junk before the header
        data = image_to_pdf(data, name, default_dpi=default_dpi)
    try:
        return pikepdf.open(io.BytesIO(data), password=password or "")
    except pikepdf.PasswordError:
        message = "encrypted PDF: wrong password" if password else "encrypted PDF: a password is required"
        raise PasswordRequired(name, message) from None
    except pikepdf.PdfError as exc:
        raise CorruptFile(name, f"damaged PDF, cannot be opened ({exc})") from None
