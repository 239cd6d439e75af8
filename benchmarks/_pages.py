"""Varied page images for the throughput benchmarks: never one page copied.

Sources are the images of ``--sources``/``--pages-from`` folders (PNG/JPEG/TIFF, e.g. a few dozen FUNSD or
SROIE pages carried in ``.carry/pages``), else the bundled sample invoice. Each variant is a source page
scaled by 0.7-1.3, cropped to a random window (70-100% of each side), shifted by up to 40 px on a paper
margin and lightly brightened or darkened, so every variant has its own size and its own word widths.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp")


def source_pages(folders: list[Path] | None, limit: int = 200) -> list[np.ndarray]:
    """RGB uint8 pages of the image files under ``folders`` (recursively, sorted; at most ``limit``), or
    the bundled sample page when none is given or found."""
    from PIL import Image

    files: list[Path] = []
    for folder in folders or []:
        folder = Path(folder)
        found = [folder] if folder.is_file() else folder.rglob("*")
        files += sorted(p for p in found if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    pages = []
    for path in files[:limit]:
        try:
            with Image.open(path) as img:
                pages.append(np.asarray(img.convert("RGB")))
        except Exception:  # noqa: BLE001 - a damaged source is skipped
            continue
    if not pages:
        from vision.assets.make_sample import SAMPLE_PATH

        with Image.open(SAMPLE_PATH) as img:
            pages.append(np.asarray(img.convert("RGB")))
    return pages


def vary(page: np.ndarray, rng: np.random.Generator, scale: tuple[float, float] = (0.7, 1.3)) -> np.ndarray:
    """One variant of ``page``: scaled, cropped, shifted on a paper margin, brightness changed."""
    import cv2

    s = float(rng.uniform(*scale))
    h, w = page.shape[:2]
    out = cv2.resize(page, (max(64, round(w * s)), max(64, round(h * s))),
                     interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    h, w = out.shape[:2]
    ch, cw = round(h * rng.uniform(0.7, 1.0)), round(w * rng.uniform(0.7, 1.0))
    y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
    out = out[y:y + ch, x:x + cw]
    dy, dx = (int(v) for v in rng.integers(0, 41, size=2))
    paper = np.full((ch + dy + int(rng.integers(0, 41)), cw + dx + int(rng.integers(0, 41)), 3), 250, np.uint8)
    paper[dy:dy + ch, dx:dx + cw] = out
    gain = float(rng.uniform(0.9, 1.05))
    return np.clip(paper.astype(np.float32) * gain, 0, 255).astype(np.uint8)


def variant(sources: list[np.ndarray], i: int, seed: int = 0) -> np.ndarray:
    """Variant ``i`` of the set ``seed``: source ``i mod len(sources)``, varied by its own random stream."""
    return vary(sources[i % len(sources)], np.random.default_rng([seed, i]))


def variants(sources: list[np.ndarray], count: int, seed: int = 0) -> Iterator[np.ndarray]:
    """``count`` variants, cycling through ``sources``."""
    for i in range(count):
        yield variant(sources, i, seed)


def write_pages(sources: list[np.ndarray], count: int, folder: Path, seed: int = 0, quality: int = 92,
                processes: int | None = None) -> list[Path]:
    """Write ``count`` variants as JPEG files ``folder/page_00000.jpg``... (made by ``processes`` threads,
    default the CPU count: OpenCV releases the GIL); returns their paths."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import cv2

    folder.mkdir(parents=True, exist_ok=True)

    def write(i: int) -> Path:
        path = folder / f"page_{i:05d}.jpg"
        page = variant(sources, i, seed)
        cv2.imwrite(str(path), cv2.cvtColor(page, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
        return path

    with ThreadPoolExecutor(processes or os.cpu_count() or 1) as pool:
        return list(pool.map(write, range(count)))
