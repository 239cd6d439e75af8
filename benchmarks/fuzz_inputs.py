"""Inputs for ``benchmarks/fuzz_readers.py``: generated seed files (images, PDFs, videos) and the byte
mutations made from them. Deterministic from the caller's ``random.Random``."""

from __future__ import annotations

import io
import random

# ----------------------------------------------------------------------------- seeds
def _image_seeds() -> dict[str, bytes]:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    rgb = Image.fromarray(rng.integers(0, 255, (24, 32, 3), dtype=np.uint8))
    seeds = {}
    for fmt, ext, kwargs in [
        ("PNG", "png", {}),
        ("JPEG", "jpeg", {"quality": 80}),
        ("GIF", "gif", {}),
        ("BMP", "bmp", {}),
        ("WEBP", "webp", {"quality": 80}),
    ]:
        buf = io.BytesIO()
        rgb.save(buf, fmt, **kwargs)
        seeds[ext] = buf.getvalue()
    buf = io.BytesIO()
    rgb.convert("RGBA").save(buf, "PNG")
    seeds["png-rgba"] = buf.getvalue()
    buf = io.BytesIO()
    flat = Image.new("RGB", (40, 30), "white")
    flat.paste((200, 30, 30), (5, 5, 25, 20))
    flat.convert("P").save(buf, "PNG", transparency=0, dpi=(300, 300), optimize=True)
    seeds["png-palette"] = buf.getvalue()  # small IDAT: mutations land in PLTE, tRNS, pHYs and IHDR too
    buf = io.BytesIO()
    Image.fromarray((rng.integers(0, 65535, (16, 20))).astype(np.uint16)).save(buf, "PNG")
    seeds["png-16bit"] = buf.getvalue()
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    rgb.save(buf, "JPEG", exif=exif.tobytes())
    seeds["jpeg-exif"] = buf.getvalue()
    buf = io.BytesIO()
    rgb.save(
        buf, "TIFF", save_all=True, append_images=[rgb.convert("L"), rgb.rotate(90)], compression="tiff_lzw"
    )
    seeds["tiff"] = buf.getvalue()
    buf = io.BytesIO()
    rgb.convert("P").save(buf, "GIF", save_all=True, append_images=[rgb.rotate(180).convert("P")])
    seeds["gif-anim"] = buf.getvalue()
    return seeds


def _pdf_seeds() -> dict[str, bytes]:
    import numpy as np
    from fpdf import FPDF
    from PIL import Image

    pdf = FPDF(unit="pt", format=(200, 150))
    pdf.set_font("helvetica", size=14)
    for i in range(3):
        pdf.add_page()
        pdf.text(10, 30, f"Page {i} hello world")
        pdf.rect(10, 50, 80, 40)
    pdf.image(Image.fromarray(np.full((20, 30, 3), 90, np.uint8)), x=100, y=60, w=60)
    seeds = {"pdf": bytes(pdf.output())}
    enc = FPDF(unit="pt", format=(120, 120))
    enc.set_encryption(owner_password="owner", user_password="")  # opens without a password
    enc.add_page()
    enc.set_font("helvetica", size=12)
    enc.text(10, 30, "encrypted")
    seeds["pdf-encrypted"] = bytes(enc.output())
    return seeds


def _video_seeds() -> dict[str, bytes]:
    import torch
    from torchcodec.encoders import VideoEncoder

    frames = torch.zeros(12, 3, 32, 48, dtype=torch.uint8)
    for i in range(12):
        frames[i, i % 3] = 20 * i
    seeds = {}
    for ext in ("mp4", "mkv"):
        buf = io.BytesIO()
        VideoEncoder(frames, frame_rate=6).to_file_like(buf, format="matroska" if ext == "mkv" else ext)
        seeds[ext] = buf.getvalue()
    return seeds


def make_seeds() -> dict[str, tuple[str, bytes]]:
    """``name -> (reader kind, bytes)`` for every seed."""
    seeds = {name: ("image", data) for name, data in _image_seeds().items()}
    seeds.update({name: ("pdf", data) for name, data in _pdf_seeds().items()})
    seeds.update({name: ("video", data) for name, data in _video_seeds().items()})
    return seeds


# ----------------------------------------------------------------------------- mutations
INTERESTING = [
    b"\x00",
    b"\xff",
    b"\x7f",
    b"\x80",
    b"\x00\x00\x00\x00",
    b"\xff\xff\xff\xff",
    b"\x7f\xff\xff\xff",
    b"\x00\x00\x80\x00",
    b"\xff\xfe",
    b"0",
    b"-1",
    b"99999999",
    b"obj",
    b"endobj",
    b"trailer",
    b"%%EOF",
]


def mutate(data: bytes, rng: random.Random, others: list[bytes]) -> bytes:
    """1-8 random edits: bit flips, random or interesting bytes, inserts, deletes, duplicated chunks,
    truncation or a splice with another seed; half the edits land in the first 256 bytes (headers)."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not buf:
            buf = bytearray(rng.choice(others)[:64])
        pos = rng.randrange(min(len(buf), 256)) if rng.random() < 0.5 else rng.randrange(len(buf))
        op = rng.randrange(8)
        if op == 0:
            buf[pos] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[pos] = rng.randrange(256)
        elif op == 2:
            chunk = rng.choice(INTERESTING)
            buf[pos : pos + len(chunk)] = chunk
        elif op == 3:
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
        elif op == 4:
            del buf[pos : pos + rng.randint(1, 64)]
        elif op == 5:
            n = rng.randint(1, 128)
            buf[pos:pos] = buf[rng.randrange(len(buf)) :][:n]
        elif op == 6:
            del buf[max(1, rng.randrange(len(buf))) :]
        else:
            other = rng.choice(others)
            buf = buf[:pos] + bytearray(other[rng.randrange(len(other)) :])
    return bytes(buf)


def fix_png_crcs(data: bytes) -> bytes:
    """Recompute every chunk CRC of a (mutated) PNG, so that the fuzzing reaches past Pillow's CRC check."""
    import struct
    import zlib

    out, pos = bytearray(data[:8]), 8
    while pos + 12 <= len(data):
        length = struct.unpack(">I", data[pos : pos + 4])[0]
        end = pos + 8 + length
        if end + 4 > len(data):
            break
        body = data[pos + 4 : end]
        out += data[pos:end] + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        pos = end + 4
    return bytes(out + data[pos:])

