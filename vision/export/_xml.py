"""Shared pieces of the XML exporters (hOCR, ALTO): safe text, confidences, word shapes and serialisation."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import vision
from vision.structures.document import Word

# Characters XML 1.0 forbids (C0 controls other than tab/newline/return, lone surrogates, U+FFFE/U+FFFF).
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

SOFTWARE = "vision"
VERSION = vision.__version__


def xml_text(text: str) -> str:
    """``text`` with characters that XML 1.0 cannot carry replaced by U+FFFD (escaping is ElementTree's)."""
    return _NOT_XML.sub("\ufffd", text)


def unit_confidence(confidence: float) -> float:
    """A confidence clamped to [0, 1] (NaN becomes 0) so the formats' ranges always hold."""
    return 0.0 if math.isnan(confidence) else min(max(float(confidence), 0.0), 1.0)


def word_points(word: Word, dimensions: tuple[int, int]) -> str | None:
    """The word's shape as whole-pixel pairs ``"x0 y0 x1 y1 ..."`` (hOCR's ``poly``, ALTO's ``POINTS``),
    when it has one beyond its box: its outline (``OCROptions.outlines``: text on a curved baseline) or else
    its rotated quad (``assume_straight_pages=False``); ``None`` for straight words, whose box says it all."""
    points = word.outline if word.outline is not None else word.polygon
    if points is None:
        return None
    height, width = dimensions
    return " ".join(f"{round(min(max(x, 0.0), 1.0) * width)} {round(min(max(y, 0.0), 1.0) * height)}"
                    for x, y in points)


def serialize(root: ET.Element, prolog: str = "") -> str:
    """Indented XML text with an XML declaration, then ``prolog`` (e.g. a DOCTYPE), then ``root``."""
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{prolog}{body}\n'
