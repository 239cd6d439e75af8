"""Shared fixtures of the training tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def write_text_pdf(path: Path, *, pages: int, lines: int, size: int, top: int, step: int, text: str) -> Path:
    """A letter-size PDF of Helvetica lines (``text`` is formatted with ``page`` and ``line``)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="letter")
    pdf.set_font("helvetica", size=size)
    for page in range(pages):
        pdf.add_page()
        for line in range(lines):
            pdf.text(72, top + line * step, text.format(page=page, line=line))
    pdf.output(str(path))
    return path


@pytest.fixture(scope="session")
def text_pdf() -> Callable[..., Path]:
    """:func:`write_text_pdf`, for fixtures that build PDF corpora."""
    return write_text_pdf
