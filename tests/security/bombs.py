"""Hostile inputs, generated as small files at test time: each promises far more work than its size.

Used by ``tests/security`` and ``benchmarks/attack.py``; every builder returns the file's bytes.
"""

from __future__ import annotations

import io
import struct
import zlib

__all__ = ["gif_screen_bomb", "pdf_forms_bomb", "png16_bomb", "tiff_pages_bomb"]


def gif_screen_bomb(side: int = 13_000) -> bytes:
    """A GIF whose logical screen is ``side`` x ``side`` but whose only frame is 1 x 1 (about 35 bytes)."""
    header = b"GIF89a" + struct.pack("<HHBBB", side, side, 0x80, 0, 0)  # global table of 2 colours
    palette = b"\x00\x00\x00\xff\xff\xff"
    frame = b"," + struct.pack("<HHHHB", 0, 0, 1, 1, 0)
    pixels = b"\x02\x02\x44\x01\x00"  # LZW min code size 2, one sub-block: clear, 0, end
    return header + palette + frame + pixels + b";"


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png16_bomb(side: int = 13_000) -> bytes:
    """A valid 16-bit grayscale PNG of ``side`` x ``side`` black pixels (329 KB at 13000), streamed out."""
    comp = zlib.compressobj(9)
    row = b"\x00" + bytes(2 * side)  # filter byte + samples
    idat = b"".join(comp.compress(row) for _ in range(side)) + comp.flush()
    ihdr = struct.pack(">IIBBBBB", side, side, 16, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def tiff_pages_bomb(pages: int = 20, side: int = 13_000) -> bytes:
    """A little-endian TIFF of ``pages`` bilevel ``side`` x ``side`` pages sharing one strip (21 KB)."""
    strip = zlib.compress(bytes((side + 7) // 8 * side), 9)  # one black page: 21 MB deflate to 21 KB
    out = io.BytesIO()
    out.write(b"II*\x00" + struct.pack("<I", 8 + len(strip) + (len(strip) & 1)))
    out.write(strip + b"\x00" * (len(strip) & 1))
    tags = lambda: [
        (256, 4, 1, side),
        (257, 4, 1, side),
        (258, 3, 1, 1),
        (259, 3, 1, 8),  # Adobe deflate
        (262, 3, 1, 1),  # black is zero
        (273, 4, 1, 8),  # every page's only strip starts at byte 8
        (277, 3, 1, 1),
        (278, 4, 1, side),
        (279, 4, 1, len(strip)),
    ]
    for page in range(pages):
        entries = tags()
        start = out.tell()
        next_ifd = 0 if page == pages - 1 else start + 2 + 12 * len(entries) + 4
        out.write(struct.pack("<H", len(entries)))
        for tag, kind, count, value in entries:
            out.write(struct.pack("<HHI", tag, kind, count))
            out.write(struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value))
        out.write(struct.pack("<I", next_ifd))
    return out.getvalue()


def pdf_forms_bomb(depth: int = 8, fanout: int = 10) -> bytes:
    """A one-page PDF whose content draws a form that draws the next one ``fanout`` times, ``depth`` deep:
    ``fanout ** depth`` rectangles to fill (10**8 by default) from a few kilobytes."""
    import pikepdf

    pdf = pikepdf.new()
    leaf = pikepdf.Stream(pdf, b"0 0 1 1 re f")
    leaf.Type, leaf.Subtype, leaf.BBox = pikepdf.Name.XObject, pikepdf.Name.Form, [0, 0, 1, 1]
    form = pdf.make_indirect(leaf)
    for _ in range(depth):
        parent = pikepdf.Stream(pdf, b" ".join([b"q /F Do Q"] * fanout))
        parent.Type, parent.Subtype, parent.BBox = pikepdf.Name.XObject, pikepdf.Name.Form, [0, 0, 1, 1]
        parent.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(F=form))
        form = pdf.make_indirect(parent)
    page = pdf.add_blank_page(page_size=(612, 792))
    page.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(F=form))
    page.Contents = pdf.make_indirect(pikepdf.Stream(pdf, b"q 612 0 0 792 0 0 cm /F Do Q"))
    buf = io.BytesIO()
    pdf.save(buf)
    return buf.getvalue()
