"""The recognition vocabulary: which characters the CTC head can emit, and the blank's index.

Classes (in this order; the index of a character is its class id):

* ``0``: the CTC **blank** (:data:`BLANK`). It is never part of any text.
* ``1..95``: printable ASCII, ``" "`` (space, 32) to ``"~"`` (126), in code-point order.
* the accented Latin letters of Western and Central European languages: Latin-1 letters (``À``..``ÿ``, with
  ``Æ æ Ø ø ß Ð ð Þ þ``) and the Latin Extended-A/B letters used by Czech, Slovak, Polish, Hungarian,
  Slovenian, Croatian, Romanian, the Baltic languages and French (``Œ œ Ÿ``).
* symbols: ``€ £ ¥ § ° ± × ÷ « » “ ” ‘ ’ – —``.
* check boxes: ``☐`` (empty) and ``☑`` (checked). Forms mark boxes with ticks, crosses or fills; the
  ground truth we measure against (FUNSD) writes every checked box as ``☑``, so :func:`normalize_text` maps
  ``☒`` (and ``✓ ✔ ✗ ✘`` drawn in a box) to ``☑``: one class per box state, not per glyph shape.

:func:`normalize_text` also folds typographic variants to their class (NBSP and other spaces to ``" "``,
``‐ ‑ ‒`` to ``-``, ``−`` to ``-``...), composes decomposed accents (NFC) and drops characters outside the
vocabulary; training labels and evaluation both go through it.
"""

from __future__ import annotations

import unicodedata

__all__ = [
    "BLANK",
    "CHAR_TO_INDEX",
    "CHECKBOX_CHECKED",
    "CHECKBOX_EMPTY",
    "NUM_CLASSES",
    "VOCAB",
    "decode",
    "encode",
    "normalize_text",
]

BLANK = 0

_ASCII = "".join(chr(c) for c in range(32, 127))
_LATIN1 = "".join(chr(c) for c in range(0xC0, 0x100) if c not in (0xD7, 0xF7))  # letters only (no × ÷)
_CENTRAL = ("ĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĖėĘęĚěĞğĢģĪīĮįİıĶķĹĺĻļĽľŁłŃńŅņŇňŌōŐőŒœŔŕŖŗŘřŚśŞşŠšŢţŤťŪūŮůŰűŲų"
            "ŸŹźŻżŽžȘșȚț")
_SYMBOLS = "€£¥§°±×÷«»“”‘’–—"
CHECKBOX_EMPTY = "☐"
CHECKBOX_CHECKED = "☑"

VOCAB: str = _ASCII + _LATIN1 + _CENTRAL + _SYMBOLS + CHECKBOX_EMPTY + CHECKBOX_CHECKED
"""Characters in class order; class ``i + 1`` is ``VOCAB[i]`` (class 0 is the blank)."""

NUM_CLASSES: int = len(VOCAB) + 1
CHAR_TO_INDEX: dict[str, int] = {c: i + 1 for i, c in enumerate(VOCAB)}
assert len(CHAR_TO_INDEX) == len(VOCAB), "duplicate characters in VOCAB"

_FOLD = {
    "\u00a0": " ", "\u2007": " ", "\u2009": " ", "\u202f": " ", "\t": " ", "\u2002": " ", "\u2003": " ",
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2212": "-", "\u00ad": "",
    "\u2032": "'", "\u2033": '"', "\u201a": "‘", "\u201e": "“", "\u2039": "<", "\u203a": ">",
    "\u2026": "...", "\ufb01": "fi", "\ufb02": "fl", "\u00b7": ".", "\u2022": "*",
    "\u2612": CHECKBOX_CHECKED, "\u2713": CHECKBOX_CHECKED, "\u2714": CHECKBOX_CHECKED,
    "\u2717": CHECKBOX_CHECKED, "\u2718": CHECKBOX_CHECKED, "\u25a1": CHECKBOX_EMPTY, "\u2751": CHECKBOX_EMPTY,
}


def normalize_text(text: str) -> str:
    """NFC-compose, fold variants (spaces, dashes, check marks...) and drop out-of-vocabulary characters."""
    text = unicodedata.normalize("NFC", text)
    out = []
    for ch in text:
        ch = _FOLD.get(ch, ch)
        out.extend(c for c in ch if c in CHAR_TO_INDEX)
    return "".join(out)


def encode(text: str) -> list[int]:
    """Class ids of ``text`` (after :func:`normalize_text`); never contains :data:`BLANK`."""
    return [CHAR_TO_INDEX[c] for c in normalize_text(text)]


def decode(indices: list[int]) -> str:
    """Text of class ids (blanks are skipped; no CTC collapsing: see ``vision.ops.ctc`` for that)."""
    return "".join(VOCAB[i - 1] for i in indices if 0 < i <= len(VOCAB))
