"""Render the bundled sample page (``vision/assets/sample_page.png``): a one-page invoice letter.

Deterministic (fixed text, layout and DejaVu fonts, no randomness), so the committed PNG can be rebuilt
byte for byte on any machine with ``fonts-dejavu-core``::

    python -m vision.assets.make_sample            # rewrites vision/assets/sample_page.png

The page is US letter at 150 dpi (1275 x 1650 pixels): a letterhead with a logo, two address blocks,
invoice facts, an item table with rules, totals and a short two-paragraph note. :func:`render_sample` also
returns each word's pixel box, so the sample can serve as a tiny ground-truth page.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

__all__ = ["render_sample", "SAMPLE_PATH", "FONT_DIR"]

SAMPLE_PATH = Path(__file__).with_name("sample_page.png")
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
SIZE = (1275, 1650)  # US letter at 150 dpi
MARGIN = 110

ITEMS = [
    ("A-1042", "Archival storage boxes, acid free", "24", "3.80"),
    ("B-2210", "Flatbed scanner service, 6 months", "1", "420.00"),
    ("C-0317", "Document preparation (per hour)", "12", "38.50"),
    ("D-5580", "Indexing and metadata entry", "850", "0.42"),
    ("E-0091", "Secure shredding, bin collection", "3", "27.00"),
]
NOTE = [
    "Thank you for your order of March 14. The scanned records were delivered on two",
    "encrypted drives and the originals were returned to your office in Springfield.",
    "",
    "Payment is due within 30 days. Please quote the invoice number with your transfer.",
    "Questions about this invoice can be sent to billing@northwind-archive.example.",
]


def _font(name: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_DIR / name), size)


class _Writer:
    """Draws text word by word and records each word's pixel box."""

    def __init__(self, draw: ImageDraw.ImageDraw) -> None:
        self.draw = draw
        self.words: list[tuple[str, tuple[int, int, int, int]]] = []

    def text(
        self,
        x: float,
        y: float,
        text: str,
        font: ImageFont.FreeTypeFont,
        *,
        anchor_right: bool = False,
        fill: tuple[int, int, int] = (20, 20, 20),
    ) -> None:
        if anchor_right:
            x -= self.draw.textlength(text, font=font)
        space = self.draw.textlength(" ", font=font)
        for word in text.split():
            box = self.draw.textbbox((x, y), word, font=font)
            self.draw.text((x, y), word, font=font, fill=fill)
            self.words.append((word, tuple(int(v) for v in box)))
            x += self.draw.textlength(word, font=font) + space


def render_sample() -> tuple[Image.Image, list[tuple[str, tuple[int, int, int, int]]]]:
    """The sample page as an RGB image, with ``(word, (x0, y0, x1, y1))`` pixel boxes in drawing order."""
    image = Image.new("RGB", SIZE, (255, 255, 255))
    draw = ImageDraw.Draw(image)
    w = _Writer(draw)
    regular, bold = _font("DejaVuSans.ttf", 22), _font("DejaVuSans-Bold.ttf", 22)
    serif = _font("DejaVuSerif.ttf", 22)
    right = SIZE[0] - MARGIN

    draw.rectangle((MARGIN, 95, MARGIN + 120, 215), fill=(32, 74, 135))  # logo: a non-text region
    draw.ellipse((MARGIN + 25, 120, MARGIN + 95, 190), fill=(240, 180, 40))
    w.text(MARGIN + 150, 100, "Northwind Archive Services", _font("DejaVuSans-Bold.ttf", 40))
    w.text(MARGIN + 150, 160, "118 Harbor Street, Portland, OR 97204", regular)
    w.text(MARGIN + 150, 192, "Phone (503) 555-0147", regular)
    w.text(right, 100, "INVOICE", _font("DejaVuSans-Bold.ttf", 34), anchor_right=True)
    draw.line((MARGIN, 250, right, 250), fill=(32, 74, 135), width=3)

    y = 290
    w.text(MARGIN, y, "Bill to:", bold)
    for i, line in enumerate(
        ["Dr. Helen Marsh", "Springfield Historical Society", "42 Elm Avenue", "Springfield, IL 62701"]
    ):
        w.text(MARGIN, y + 34 * (i + 1), line, regular)
    for i, (label, value) in enumerate(
        [
            ("Invoice No.", "INV-2024-0387"),
            ("Date:", "March 28, 2024"),
            ("Customer ID:", "SHS-0192"),
            ("Terms:", "Net 30"),
        ]
    ):
        w.text(760, y + 34 * i, label, bold)
        w.text(right, y + 34 * i, value, regular, anchor_right=True)

    y = 520
    columns = [MARGIN, MARGIN + 140, 820, right]
    draw.rectangle((MARGIN - 10, y - 10, right + 10, y + 36), fill=(225, 232, 242))
    for x, head, is_right in zip(columns, ["Code", "Description", "Qty", "Amount"], [0, 0, 1, 1]):
        w.text(x + (40 if head == "Qty" else 0), y, head, bold, anchor_right=bool(is_right))
    total = 0.0
    for row, (code, desc, qty, price) in enumerate(ITEMS):
        ry = y + 60 + 44 * row
        amount = int(qty) * float(price)
        total += amount
        w.text(columns[0], ry, code, regular)
        w.text(columns[1], ry, desc, regular)
        w.text(columns[2] + 40, ry, qty, regular, anchor_right=True)
        w.text(right, ry, f"{amount:,.2f}", regular, anchor_right=True)
        draw.line((MARGIN - 10, ry + 36, right + 10, ry + 36), fill=(190, 190, 190), width=1)

    ty = y + 60 + 44 * len(ITEMS) + 30
    tax = round(total * 0.07, 2)
    for i, (label, value) in enumerate([("Subtotal", total), ("Tax (7%)", tax), ("Total due", total + tax)]):
        font = bold if i == 2 else regular
        w.text(840, ty + 36 * i, label, font)
        w.text(right, ty + 36 * i, f"USD {value:,.2f}", font, anchor_right=True)

    ny = ty + 170
    for i, line in enumerate(NOTE):
        if line:
            w.text(MARGIN, ny + 36 * i, line, serif)
    w.text(MARGIN, ny + 36 * len(NOTE) + 50, "Sincerely,", serif)
    w.text(MARGIN, ny + 36 * len(NOTE) + 130, "Margaret Olsen, Accounts Manager", serif)
    draw.line((MARGIN, 1540, right, 1540), fill=(180, 180, 180), width=1)
    w.text(MARGIN, 1555, "Northwind Archive Services LLC  -  Tax ID 93-4418202", _font("DejaVuSans.ttf", 17))
    return image, w.words


def main(argv: list[str] | None = None) -> int:
    """Write the sample page (default: the bundled path) and print its size and word count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=SAMPLE_PATH)
    args = parser.parse_args(argv)
    image, words = render_sample()
    image.save(args.output, optimize=True)
    print(f"{args.output}: {image.size[0]}x{image.size[1]}, {len(words)} words")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
