"""Format detection from magic bytes (never from the file name: extensions lie)."""

from __future__ import annotations

__all__ = ["sniff_format", "kind_of", "IMAGE_FORMATS", "VIDEO_FORMATS"]

IMAGE_FORMATS = frozenset({"png", "jpeg", "gif", "bmp", "tiff", "webp"})
VIDEO_FORMATS = frozenset({"mp4", "matroska", "avi", "mpeg-ts", "mpeg-ps", "flv", "ogg", "asf"})
AUDIO_FORMATS = frozenset({"wav", "mp3", "flac", "m4a"})
HEIF_BRANDS = (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis")
AUDIO_BRANDS = (b"M4A ", b"M4B ", b"M4P ", b"F4A ")

_PREFIXES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"II+\x00", "tiff"),  # BigTIFF
    (b"MM\x00+", "tiff"),
    (b"\x1a\x45\xdf\xa3", "matroska"),  # also WebM
    (b"FLV\x01", "flv"),
    (b"OggS", "ogg"),
    (b"\x00\x00\x01\xba", "mpeg-ps"),
    (b"\x30\x26\xb2\x75\x8e\x66\xcf\x11", "asf"),
    (b"fLaC", "flac"),
    (b"ID3", "mp3"),
)


def _sniff_riff(head: bytes) -> str | None:
    kind = head[8:12]
    return {b"WEBP": "webp", b"AVI ": "avi", b"WAVE": "wav"}.get(kind)


def _sniff_iso_bmff(head: bytes) -> str | None:
    """ISO base media (MP4, MOV, M4A, HEIF): a box header whose type is ``ftyp`` or another top-level box."""
    box = head[4:8]
    if box == b"ftyp":
        brand = head[8:12]
        if brand in HEIF_BRANDS:
            return "heif"
        if brand in AUDIO_BRANDS:
            return "m4a"
        return "mp4"
    if box in (b"moov", b"mdat", b"free", b"wide", b"skip", b"pnot"):
        return "mp4"
    return None


def sniff_format(head: bytes) -> str | None:
    """Name the format of a file from its first bytes (``"png"``, ``"pdf"``, ``"mp4"``, ...), or ``None``.

    Knows the image formats we decode, PDF, common video containers, and a few audio and HEIF
    formats (so that their error message can say what they are).
    """
    for prefix, name in _PREFIXES:
        if head.startswith(prefix):
            return name
    if head.startswith(b"RIFF") and len(head) >= 12:
        return _sniff_riff(head)
    if head.startswith(b"BM") and len(head) >= 14 and head[6:10] == b"\x00\x00\x00\x00":
        return "bmp"  # "BM" + size + two reserved zero words
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if len(head) >= 12 and (found := _sniff_iso_bmff(head)):
        return found
    if len(head) >= 189 and head[0] == 0x47 and head[188] == 0x47:
        return "mpeg-ts"
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        return "mp3"  # MPEG audio frame sync without an ID3 tag
    return None


def kind_of(fmt: str | None) -> str | None:
    """Map a sniffed format to the reader that handles it: ``"image"``, ``"pdf"``, ``"video"`` or ``None``."""
    if fmt in IMAGE_FORMATS:
        return "image"
    if fmt == "pdf":
        return "pdf"
    if fmt in VIDEO_FORMATS or fmt == "m4a":
        return "video"  # the video reader explains when a container holds no video stream
    return None


def describe_unsupported(fmt: str | None) -> str:
    """Why a sniffed format is refused, for error messages."""
    if fmt in AUDIO_FORMATS:
        return f"audio file ({fmt}) with no video stream"
    if fmt == "heif":
        return "HEIF/AVIF images are not supported (convert to PNG or JPEG)"
    if fmt is None:
        return "unrecognised format (not PNG, JPEG, GIF, BMP, TIFF, WebP, PDF or a video container)"
    return f"unsupported format ({fmt})"
