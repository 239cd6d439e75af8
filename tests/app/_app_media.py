"""Test inputs made on the spot: text pages (PNG), scanned and born-digital PDFs (one encrypted), a video."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import torch
from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.truetype(str(FONT), size) if FONT.is_file() else ImageFont.load_default(size=size)


def page_image(lines: list[str], size: tuple[int, int] = (480, 640), font_size: int = 28) -> Image.Image:
    """A white ``(height, width)`` page with ``lines`` of black text."""
    image = Image.new("RGB", (size[1], size[0]), "white")
    draw = ImageDraw.Draw(image)
    for i, text in enumerate(lines):
        draw.text((40, 40 + i * int(font_size * 1.8)), text, fill="black", font=_font(font_size))
    return image


def png(lines: list[str], size: tuple[int, int] = (480, 640)) -> bytes:
    buf = io.BytesIO()
    page_image(lines, size).save(buf, format="PNG")
    return buf.getvalue()


def scanned_pdf(pages: int, size: tuple[int, int] = (480, 640)) -> bytes:
    """A PDF of page images only (no text layer), so every page goes through the models."""
    images = [page_image([f"Page {i + 1} of {pages}", "scanned text line"], size) for i in range(pages)]
    buf = io.BytesIO()
    images[0].save(buf, format="PDF", save_all=True, append_images=images[1:], resolution=72.0)
    return buf.getvalue()


def digital_pdf(pages: list[list[str]], password: str | None = None) -> bytes:
    """A born-digital PDF (text objects, so every page carries a text layer), optionally encrypted."""
    pdf = FPDF(unit="pt", format=(612, 792))
    if password is not None:
        pdf.set_encryption(owner_password=password + "-owner", user_password=password)
    pdf.set_font("helvetica", size=18)
    for lines in pages:
        pdf.add_page()
        for i, text in enumerate(lines):
            pdf.text(72, 100 + 30 * i, text)
    return bytes(pdf.output())


def video(seconds: float = 4.0, rate: float = 5.0, size: tuple[int, int] = (128, 192)) -> bytes:
    """An MP4 (H.264 when available) showing "ONE" then "TWO", ``seconds`` long at ``rate`` frames/s."""
    from torchcodec.encoders import VideoEncoder

    frames = []
    for k in range(int(seconds * rate)):
        text = "ONE" if k / rate < seconds / 2 else "TWO"
        frames.append(torch.from_numpy(np.array(page_image([text], size, font_size=24))).permute(2, 0, 1))
    encoded = VideoEncoder(torch.stack(frames), frame_rate=rate).to_tensor("mp4", pixel_format="yuv420p")
    return encoded.numpy().tobytes()
