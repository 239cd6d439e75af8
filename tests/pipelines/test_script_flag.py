"""Text in a script no shipped recognizer reads comes back flagged: low word confidences and a page warning
naming the script (Cyrillic and Greek pages drawn with DejaVu), while a Latin page carries no warning."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

import vision
from vision.models.recognition.script import WEIGHTS

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
TEXTS = {
    "Cyrillic": ["Москва и Санкт-Петербург", "Отчёт о продажах за год", "Итого к оплате: 1250 руб.",
                 "Директор Иванов Пётр Сергеевич", "Спасибо за покупку"],
    "Greek": ["Αθήνα και Θεσσαλονίκη", "Έκθεση πωλήσεων του έτους", "Σύνολο προς πληρωμή: 1250 ευρώ",
              "Διευθυντής Γιώργος Παπαδόπουλος", "Ευχαριστούμε για την αγορά"],
    "Latin": ["Invoice number 2024-117", "Total amount due: 1250 EUR", "Thank you for your purchase",
              "Straße und Größe", "Director John Smith"],
}


def page(lines: list[str]) -> np.ndarray:
    font = ImageFont.truetype(str(DEJAVU), 30)
    img = Image.new("RGB", (1000, 80 + 70 * len(lines)), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((60, 50 + 70 * i), line, font=font, fill="black")
    return np.asarray(img)


@pytest.fixture(scope="module")
def predictor():
    assert WEIGHTS.exists(), "the script classifier's weights ship with the package"
    assert DEJAVU.exists(), "DejaVu fonts are installed by make setup (fonts-dejavu-core)"
    return vision.ocr_predictor(device="cpu")


@pytest.mark.parametrize("capitals", [False, True])
@pytest.mark.parametrize("script", ["Cyrillic", "Greek"])
def test_foreign_script_pages_are_flagged(predictor, script: str, capitals: bool) -> None:
    """In capitals too: their readings are Latin capitals ("MOCKBA"), longer than the codes never flagged."""
    doc = predictor([page([t.upper() if capitals else t for t in TEXTS[script]])])
    (p,) = doc.pages
    # capitals of the two scripts share most shapes: a page in capitals may be named after either
    named = ("Cyrillic", "Greek") if capitals else (script,)
    assert p.warnings and any(f"text in {name} script" in p.warnings[0] for name in named)
    # the words the flag applies to (a run of 3+ letters; numbers such as "1250" are read alike in every script)
    words = [w for w in p.words if re.search(r"[^\W\d_]{3}", w.value)]
    assert len(words) >= 8 and np.median([w.confidence for w in words]) < 0.3  # not confident Latin text
    assert Document_roundtrip(doc).pages[0].warnings == p.warnings


@pytest.mark.parametrize("capitals", [False, True])
def test_latin_page_is_not_flagged(predictor, capitals: bool) -> None:
    (p,) = predictor([page([t.upper() if capitals else t for t in TEXTS["Latin"]])]).pages
    assert p.warnings == []
    assert np.median([w.confidence for w in p.words]) > 0.5


def Document_roundtrip(doc):
    return vision.Document.from_json(doc.to_json())
