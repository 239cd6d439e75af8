"""An invisible-text font for text layers: every character is one box glyph, half an em wide, never painted.

The font is a Type 0 composite font (``Identity-H``): a character code is its Unicode code point (two
bytes, Basic Multilingual Plane), the ``CIDToGIDMap`` sends every code to the one glyph (a box over the em
height, which gives text extractors a character extent; render mode 3 never paints it), and the
``ToUnicode`` map sends it back to the code point, so text extraction returns what was written. The font
program (a TrueType file built with fontTools) is embedded, its widths match the PDF's ``/DW``, and no
code maps to ``.notdef``: what PDF/A-2b asks of fonts.
"""

from __future__ import annotations

import functools
import io

import pikepdf
from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen

__all__ = ["ADVANCE", "ASCENT", "DESCENT", "FONT_NAME", "add_glyphless_font", "encode_text"]

FONT_NAME = "VisionGlyphless"
ADVANCE = 0.5  # glyph width per point of font size (500 of 1000 font units)
ASCENT, DESCENT = 0.8, -0.2  # per point of font size: size = box height, baseline 20 % above the bottom
_UNITS = 1000
_SURROGATES = range(0xD8, 0xE0)  # high bytes of the UTF-16 surrogate range: not characters


@functools.cache
def font_program() -> bytes:
    """The TrueType font: an empty ``.notdef`` and one box glyph, both ``ADVANCE`` em wide."""
    builder = FontBuilder(_UNITS, isTTF=True)
    builder.setupGlyphOrder([".notdef", "box"])
    builder.setupCharacterMap({0x20: "box"})
    advance = round(ADVANCE * _UNITS)
    ascent, descent = round(ASCENT * _UNITS), round(DESCENT * _UNITS)
    pen = TTGlyphPen(None)  # the em box: never painted (text render mode 3), it gives the glyph an extent
    pen.moveTo((0, descent))
    for point in ((0, ascent), (advance, ascent), (advance, descent)):
        pen.lineTo(point)
    pen.closePath()
    builder.setupGlyf({".notdef": TTGlyphPen(None).glyph(), "box": pen.glyph()})
    builder.setupHorizontalMetrics({".notdef": (advance, 0), "box": (advance, 0)})
    builder.setupHorizontalHeader(ascent=ascent, descent=descent)
    builder.setupNameTable({"familyName": FONT_NAME, "styleName": "Regular"})
    builder.setupOS2(sTypoAscender=ascent, sTypoDescender=descent, usWinAscent=ascent, usWinDescent=-descent)
    builder.setupPost()
    out = io.BytesIO()
    builder.save(out)
    return out.getvalue()


def _to_unicode_cmap() -> bytes:
    """A CMap mapping each two-byte code to the same Unicode code point (surrogates excluded)."""
    ranges = [f"<{hi:02X}00> <{hi:02X}FF> <{hi:02X}00>" for hi in range(256) if hi not in _SURROGATES]
    blocks = []
    for start in range(0, len(ranges), 100):  # at most 100 entries per beginbfrange block
        chunk = ranges[start : start + 100]
        blocks.append(f"{len(chunk)} beginbfrange\n" + "\n".join(chunk) + "\nendbfrange")
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        + "\n".join(blocks)
        + "\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    ).encode("ascii")


def add_glyphless_font(pdf: pikepdf.Pdf) -> pikepdf.Object:
    """Add the font's objects to ``pdf``; returns the indirect Type 0 font dictionary."""
    program = font_program()
    font_file = pdf.make_stream(program)
    font_file.Length1 = len(program)
    bbox = [0, round(DESCENT * _UNITS), round(ADVANCE * _UNITS), round(ASCENT * _UNITS)]
    descriptor = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.FontDescriptor,
            FontName=pikepdf.Name("/" + FONT_NAME),
            Flags=4,  # symbolic: the glyphs are not from the standard Latin set
            FontBBox=bbox,
            ItalicAngle=0,
            Ascent=bbox[3],
            Descent=bbox[1],
            CapHeight=bbox[3],
            StemV=80,
            FontFile2=font_file,
        )
    )
    cid_to_gid = pdf.make_stream(b"\x00\x01" * 65536)  # every code -> glyph 1 (never .notdef)
    descendant = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.CIDFontType2,
            BaseFont=pikepdf.Name("/" + FONT_NAME),
            CIDSystemInfo=pikepdf.Dictionary(
                Registry=pikepdf.String("Adobe"), Ordering=pikepdf.String("Identity"), Supplement=0
            ),
            FontDescriptor=descriptor,
            DW=round(ADVANCE * _UNITS),
            CIDToGIDMap=cid_to_gid,
        )
    )
    return pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.Type0,
            BaseFont=pikepdf.Name("/" + FONT_NAME),
            Encoding=pikepdf.Name("/Identity-H"),
            DescendantFonts=[descendant],
            ToUnicode=pdf.make_stream(_to_unicode_cmap()),
        )
    )


def encode_text(text: str) -> bytes:
    """Two-byte codes of ``text`` as a PDF hex string; characters outside the BMP become U+FFFD."""
    codes = (ord(c) if ord(c) <= 0xFFFF and not 0xD800 <= ord(c) <= 0xDFFF else 0xFFFD for c in text)
    return b"<" + "".join(f"{c:04X}" for c in codes).encode("ascii") + b">"
