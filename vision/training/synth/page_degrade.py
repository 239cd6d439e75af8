"""Page-only degradations: scan skew, phone-photo perspective onto a background, shadows, uneven light and
dpi simulation. Generic effects (blur, noise, JPEG, binarization, ink bleed...) come from
:mod:`vision.training.synth.degrade` and are chained here by profile.

Geometric effects are split in two so that label maps can follow the image exactly: :func:`page_geometry`
draws a homography and output size, :func:`warp_page` applies it to the image (compositing a photo onto
its background) and callers warp their maps with the same matrix.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.training.synth import degrade as D

__all__ = [
    "PAGE_PROFILES",
    "page_geometry",
    "warp_page",
    "shadow",
    "uneven_light",
    "desk_background",
    "simulate_dpi",
    "degrade_page",
]

# Share of pages per look. Scans and faxes dominate the pages we are measured on (FUNSD forms, SROIE
# receipts); photos and clean renders keep the model general.
PAGE_PROFILES: dict[str, float] = {"clean": 0.15, "scan": 0.4, "fax": 0.15, "receipt": 0.1, "photo": 0.2}


def page_geometry(
    shape: tuple[int, ...], rng: np.random.Generator, profile: str
) -> tuple[np.ndarray, tuple[int, int]]:
    """A 3x3 homography and output ``(H, W)`` for a page of ``shape`` under ``profile``.

    Scans: rotation up to 5 degrees (60%) plus a slight keystone. Photos: the page placed with a random
    perspective inside a larger canvas (background shows around it).
    """
    h, w = shape[:2]
    if profile == "photo":
        out_w, out_h = int(w * rng.uniform(1.0, 1.35)), int(h * rng.uniform(1.0, 1.3))
        src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        margin = np.float32([out_w - w, out_h - h]) / 2
        jitter = rng.uniform(-0.07, 0.07, (4, 2)) * np.float32([w, h])
        dst = src + margin + jitter
        matrix = cv2.getPerspectiveTransform(src, dst.astype(np.float32))
        return matrix.astype(np.float64), (out_h, out_w)
    matrix = np.eye(3)
    if profile != "clean" and rng.random() < 0.6:
        matrix = D.rotation_matrix(shape, rng, max_degrees=5.0) @ matrix
    if profile in ("scan", "receipt") and rng.random() < 0.3:
        matrix = D.perspective_matrix(shape, rng, strength=0.015) @ matrix
    return matrix, (h, w)


def desk_background(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A ``uint8[H, W, 3]`` table/desk-like background: a colour, large blotches and fine grain."""
    h, w = shape
    base = rng.uniform(30, 220, 3).astype(np.float32)
    coarse = cv2.resize(
        rng.normal(0, 25, (8, 8, 3)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC
    )
    grain = rng.normal(0, 6, (h, w, 1)).astype(np.float32)
    return np.clip(base + coarse + grain, 0, 255).astype(np.uint8)


def warp_page(
    image: np.ndarray, matrix: np.ndarray, out_shape: tuple[int, int], rng: np.random.Generator, photo: bool
) -> np.ndarray:
    """Warp ``image (uint8[H, W, 3])`` by ``matrix`` into ``out_shape``; photos get a desk background."""
    h, w = out_shape
    if not photo:
        return (
            D.warp(image, matrix)
            if image.shape[:2] == out_shape
            else cv2.warpPerspective(image, matrix, (w, h), borderValue=(255, 255, 255))
        )
    page = cv2.warpPerspective(image, matrix, (w, h), flags=cv2.INTER_LINEAR)
    cover = cv2.warpPerspective(np.ones(image.shape[:2], np.float32), matrix, (w, h), flags=cv2.INTER_LINEAR)
    bg = desk_background(out_shape, rng).astype(np.float32)
    return (page * cover[..., None] + bg * (1 - cover[..., None])).astype(np.uint8)


def shadow(
    img: np.ndarray, rng: np.random.Generator, strength: tuple[float, float] = (0.2, 0.55)
) -> np.ndarray:
    """A soft-edged shadow (a hand or phone over the page): a random polygon darkened and blurred."""
    h, w = img.shape[:2]
    mask = np.zeros((h, w), np.float32)
    corner = rng.integers(0, 4)
    pts = rng.uniform(0, 1, (4, 2)) * np.float32([w, h])
    pts[0] = [(corner % 2) * w, (corner // 2) * h]
    cv2.fillPoly(mask, [pts.astype(np.int32)], 1.0)
    k = int(max(h, w) * rng.uniform(0.02, 0.1)) | 1
    mask = cv2.GaussianBlur(mask, (k, k), 0)
    gain = 1.0 - float(rng.uniform(*strength)) * mask
    return np.clip(img.astype(np.float32) * (gain[..., None] if img.ndim == 3 else gain), 0, 255).astype(
        np.uint8
    )


def uneven_light(
    img: np.ndarray, rng: np.random.Generator, strength: tuple[float, float] = (0.1, 0.4)
) -> np.ndarray:
    """Radial light fall-off around a random centre (vignetting, a desk lamp)."""
    h, w = img.shape[:2]
    cy, cx = rng.uniform(0, h), rng.uniform(0, w)
    yy, xx = np.ogrid[:h, :w]
    r = np.sqrt(((yy - cy) / h) ** 2 + ((xx - cx) / w) ** 2).astype(np.float32)
    gain = 1.0 - float(rng.uniform(*strength)) * np.clip(r / max(float(r.max()), 1e-6), 0, 1) ** 2
    return np.clip(img.astype(np.float32) * (gain[..., None] if img.ndim == 3 else gain), 0, 255).astype(
        np.uint8
    )


def simulate_dpi(
    img: np.ndarray,
    rng: np.random.Generator,
    dpi: tuple[float, float] = (100, 300),
    native_dpi: float = 300.0,
    fax: bool = False,
) -> np.ndarray:
    """Resample as if scanned at a random dpi in ``dpi`` (the page being ``native_dpi``), then back to size.

    Faxes binarize at the low resolution, which gives the jagged, broken strokes of real faxes.
    """
    h, w = img.shape[:2]
    f = min(1.0, float(rng.uniform(*dpi)) / native_dpi)
    small = cv2.resize(img, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA)
    if fax:
        small = D.binarize(small, rng)
    interp = cv2.INTER_NEAREST if fax and rng.random() < 0.5 else cv2.INTER_LINEAR
    return cv2.resize(small, (w, h), interpolation=interp)


def degrade_page(img: np.ndarray, rng: np.random.Generator, profile: str) -> np.ndarray:
    """Photometric degradation of a (possibly warped) page for ``profile`` (geometry is done separately)."""
    out = img
    if profile == "clean":
        return D.degrade(out, rng, "clean")
    if profile in ("scan", "fax", "receipt") and rng.random() < 0.6:
        out = simulate_dpi(
            out,
            rng,
            dpi=(150, 300) if profile != "fax" else (100, 200),
            native_dpi=float(rng.uniform(250, 400)),
            fax=profile == "fax",
        )
    if profile == "receipt" and rng.random() < 0.5:
        out = D.on_background(out, rng)
    if profile == "photo":
        if rng.random() < 0.5:
            out = shadow(out, rng)
        if rng.random() < 0.5:
            out = uneven_light(out, rng)
    chain = tuple((p, op) for p, op in D.PROFILES[profile] if op not in (D.rotate, D.perspective))
    for p, op in chain:
        if rng.random() < p:
            out = op(out, rng)
    return out
