"""Image degradations that make clean renders look like scans, faxes, receipts and phone photos.

Every function takes an ``np.uint8`` image (``HxW`` grey or ``HxWx3`` RGB; word crops and whole pages alike)
and an ``np.random.Generator``, and returns a new uint8 image of the same shape and channel count, so that
a seed fixes the result. Geometric ones also exist as matrices (:func:`perspective_matrix`,
:func:`rotation_matrix`) so page renderers can move their boxes with :func:`transform_points`.
:func:`degrade` draws a random chain for a named profile.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

__all__ = [
    "PROFILES",
    "binarize",
    "contrast",
    "degrade",
    "downscale_upscale",
    "gaussian_blur",
    "gaussian_noise",
    "illumination",
    "ink_bleed",
    "jpeg",
    "motion_blur",
    "on_background",
    "paper_background",
    "perspective",
    "perspective_matrix",
    "rotate",
    "rotation_matrix",
    "salt_pepper",
    "transform_points",
    "warp",
]

Image = np.ndarray


def _as_float(img: Image) -> np.ndarray:
    return img.astype(np.float32)


def _to_u8(img: np.ndarray) -> Image:
    return np.clip(img, 0, 255).astype(np.uint8)


def _fill(img: Image) -> tuple[int, ...] | int:
    """Border colour for warps: the median of the outer pixels (the paper colour)."""
    edge = np.concatenate([img[0].reshape(-1, *img.shape[2:]), img[-1].reshape(-1, *img.shape[2:]),
                           img[:, 0].reshape(-1, *img.shape[2:]), img[:, -1].reshape(-1, *img.shape[2:])])
    med = np.median(edge, axis=0)
    return tuple(int(v) for v in np.atleast_1d(med)) if img.ndim == 3 else int(med)


def gaussian_blur(img: Image, rng: np.random.Generator, sigma: tuple[float, float] = (0.3, 1.2)) -> Image:
    """Defocus/scanner blur with a sigma drawn from ``sigma`` (pixels)."""
    # Keep text legible on small crops: sigma at most 5% of the image height (a 16 px crop: 0.8 px).
    s = float(rng.uniform(sigma[0], max(sigma[0], min(sigma[1], 0.05 * img.shape[0]))))
    return cv2.GaussianBlur(img, (0, 0), sigmaX=s, sigmaY=s * float(rng.uniform(0.7, 1.3)))


def motion_blur(img: Image, rng: np.random.Generator, length: tuple[int, int] = (2, 5)) -> Image:
    """Camera-shake blur along a random direction, ``length`` pixels long."""
    n = int(rng.integers(length[0], max(length[0], min(length[1], img.shape[0] // 8)) + 1))
    kernel = np.zeros((n, n), np.float32)
    kernel[n // 2] = 1.0 / n
    rot = cv2.getRotationMatrix2D(((n - 1) / 2, (n - 1) / 2), float(rng.uniform(0, 180)), 1.0)
    kernel = cv2.warpAffine(kernel, rot, (n, n))
    return cv2.filter2D(img, -1, kernel / max(kernel.sum(), 1e-6))


def gaussian_noise(img: Image, rng: np.random.Generator, std: tuple[float, float] = (2.0, 14.0)) -> Image:
    """Additive sensor noise; grey noise (same on every channel) like a scanner's."""
    noise = rng.normal(0.0, float(rng.uniform(*std)), img.shape[:2]).astype(np.float32)
    return _to_u8(_as_float(img) + (noise[..., None] if img.ndim == 3 else noise))


def salt_pepper(img: Image, rng: np.random.Generator, amount: tuple[float, float] = (0.001, 0.01)) -> Image:
    """Speckle: a fraction ``amount`` of pixels set to black or white (fax and photocopy dust)."""
    out = img.copy()
    mask = rng.random(img.shape[:2]) < float(rng.uniform(*amount))
    values = np.where(rng.random(int(mask.sum())) < 0.5, 0, 255).astype(np.uint8)
    out[mask] = values[:, None] if img.ndim == 3 else values
    return out


def jpeg(img: Image, rng: np.random.Generator, quality: tuple[int, int] = (15, 75)) -> Image:
    """JPEG compression artefacts at a random quality."""
    q = int(rng.integers(quality[0], quality[1] + 1))
    code = cv2.COLOR_RGB2BGR if img.ndim == 3 else None
    src = cv2.cvtColor(img, code) if code is not None else img
    ok, buf = cv2.imencode(".jpg", src, [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:
        return img.copy()
    out = cv2.imdecode(buf, cv2.IMREAD_COLOR if img.ndim == 3 else cv2.IMREAD_GRAYSCALE)
    return cv2.cvtColor(out, cv2.COLOR_BGR2RGB) if img.ndim == 3 else out


def downscale_upscale(img: Image, rng: np.random.Generator, factor: tuple[float, float] = (0.35, 0.8)) -> Image:
    """Low resolution: shrink by ``factor`` then enlarge back (blocky or soft depending on interpolation)."""
    h, w = img.shape[:2]
    f = float(rng.uniform(max(factor[0], min(factor[1], 9.0 / h)), factor[1]))  # never below 9 px high
    small = cv2.resize(img, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA)
    interp = [cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC][int(rng.integers(3))]
    return cv2.resize(small, (w, h), interpolation=interp)


def binarize(img: Image, rng: np.random.Generator) -> Image:
    """Black-and-white scan/fax: global Otsu or local adaptive thresholding of the grey image."""
    grey = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY) if img.ndim == 3 else img
    if rng.random() < 0.5 or min(grey.shape) < 8:
        _, bw = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    else:
        block = int(rng.integers(5, max(6, min(grey.shape) // 2))) | 1
        bw = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block,
                                   float(rng.uniform(3, 15)))
    return np.repeat(bw[..., None], 3, axis=2) if img.ndim == 3 else bw


def ink_bleed(img: Image, rng: np.random.Generator, bleed_prob: float = 0.5) -> Image:
    """Thicker (bleeding, photocopy) or thinner (faded, toner-starved) dark strokes via erode/dilate."""
    if img.shape[0] < 48:  # low resolution: a full 2x2 step already doubles a stroke, so often go 1-D
        kw, kh = [(1, 2), (2, 1), (2, 2)][int(rng.integers(3))]
    else:
        kw = kh = int(rng.integers(2, 4))
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (kw, kh))
    # Dark ink on light paper: eroding the image grows the ink, dilating thins it.
    return cv2.erode(img, kernel) if rng.random() < bleed_prob else cv2.dilate(img, kernel)


def contrast(img: Image, rng: np.random.Generator, low: tuple[float, float] = (0.45, 1.0)) -> Image:
    """Faded ink or grey paper: map [0, 255] to a random narrower range ``[a, b]``."""
    span = float(rng.uniform(*low)) * 255.0
    lo = float(rng.uniform(0, 255.0 - span))
    return _to_u8(lo + _as_float(img) * (span / 255.0))


def illumination(img: Image, rng: np.random.Generator, strength: tuple[float, float] = (0.1, 0.45)) -> Image:
    """Uneven lighting (phone photos): multiply by a linear gradient in a random direction."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    theta = float(rng.uniform(0, 2 * np.pi))
    ramp = np.cos(theta) * xx / max(w, 1) + np.sin(theta) * yy / max(h, 1)
    ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6)
    gain = 1.0 - float(rng.uniform(*strength)) * ramp
    return _to_u8(_as_float(img) * (gain[..., None] if img.ndim == 3 else gain))


def paper_background(shape: tuple[int, ...], rng: np.random.Generator) -> Image:
    """A paper-like background of ``shape`` (``(H, W)`` or ``(H, W, 3)``): tinted, with grain and blotches."""
    h, w = shape[:2]
    kind = rng.random()
    if kind < 0.35:  # white or near-white office paper
        base = rng.uniform(225, 255, 3)
    elif kind < 0.8:  # tinted: yellowed, recycled grey, coloured forms
        base = rng.uniform(150, 255, 3)
    else:  # receipts, carbon copies: grey-ish
        base = np.full(3, rng.uniform(170, 235)) + rng.normal(0, 6, 3)
    bg = np.broadcast_to(base.astype(np.float32), (h, w, 3)).copy()
    grain = rng.normal(0, float(rng.uniform(0, 6)), (h, w)).astype(np.float32)
    blot_h, blot_w = max(1, h // 16 + 1), max(1, w // 16 + 1)
    blotch = cv2.resize(rng.normal(0, float(rng.uniform(0, 12)), (blot_h, blot_w)).astype(np.float32), (w, h),
                        interpolation=cv2.INTER_CUBIC)
    bg += (grain + blotch)[..., None]
    out = _to_u8(bg)
    return out if len(shape) == 3 else cv2.cvtColor(out, cv2.COLOR_RGB2GRAY)


def on_background(img: Image, rng: np.random.Generator, ink: tuple[int, int, int] | None = None) -> Image:
    """Put dark-on-white content onto a random paper background, optionally recolouring the ink.

    Multiplicative blend: white areas take the paper colour, dark strokes stay dark (or take ``ink``).
    """
    bg = paper_background(img.shape, rng).astype(np.float32) / 255.0
    x = _as_float(img) / 255.0
    if ink is not None and img.ndim == 3:
        ink_f = np.asarray(ink, np.float32) / 255.0
        x = x + (1.0 - x) * ink_f  # darkness (1 - x) becomes the ink colour instead of black
    return _to_u8(x * bg * 255.0)


def perspective_matrix(shape: tuple[int, ...], rng: np.random.Generator, strength: float = 0.04) -> np.ndarray:
    """A 3x3 homography moving each corner by up to ``strength`` x the image size."""
    h, w = shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    jitter = rng.uniform(-strength, strength, (4, 2)) * np.float32([w, h])
    return cv2.getPerspectiveTransform(src, (src + jitter).astype(np.float32))


def rotation_matrix(shape: tuple[int, ...], rng: np.random.Generator, max_degrees: float = 5.0) -> np.ndarray:
    """A 3x3 rotation about the image centre by a uniform angle in ``[-max_degrees, max_degrees]``."""
    h, w = shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(-max_degrees, max_degrees)), 1.0)
    return np.vstack([m, [0, 0, 1]]).astype(np.float64)


def warp(img: Image, matrix: np.ndarray, fill: tuple[int, ...] | int | None = None) -> Image:
    """Apply a 3x3 homography, keeping the size; the uncovered border takes ``fill`` (default: paper colour)."""
    h, w = img.shape[:2]
    border = _fill(img) if fill is None else fill
    return cv2.warpPerspective(img, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                               borderValue=border)


def transform_points(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Map pixel points ``(N, 2)`` through a 3x3 homography (to move boxes with a warped page)."""
    pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, np.asarray(matrix, np.float64)).reshape(-1, 2)


def perspective(img: Image, rng: np.random.Generator, strength: float = 0.04) -> Image:
    """Random perspective distortion (phone photos, skewed feeds)."""
    return warp(img, perspective_matrix(img.shape, rng, strength))


def rotate(img: Image, rng: np.random.Generator, max_degrees: float = 5.0) -> Image:
    """Random small rotation (skewed scans), up to ``max_degrees``."""
    return warp(img, rotation_matrix(img.shape, rng, max_degrees))


Op = Callable[[Image, np.random.Generator], Image]

# Each profile: (probability, op) pairs applied in order. Probabilities chosen so that about a third of the
# samples stay fairly clean (born-digital crops are common too) while the rest resemble the named source.
PROFILES: dict[str, tuple[tuple[float, Op], ...]] = {
    "clean": ((0.3, gaussian_blur), (0.2, jpeg)),
    "scan": ((0.25, rotate), (0.5, gaussian_blur), (0.3, ink_bleed), (0.4, contrast), (0.4, gaussian_noise),
             (0.4, downscale_upscale), (0.15, binarize), (0.1, salt_pepper), (0.5, jpeg)),
    "fax": ((0.3, rotate), (0.6, downscale_upscale), (0.5, ink_bleed), (0.9, binarize), (0.4, salt_pepper),
            (0.3, gaussian_blur), (0.3, jpeg)),
    "receipt": ((0.3, rotate), (0.6, contrast), (0.5, ink_bleed), (0.5, gaussian_blur), (0.5, gaussian_noise),
                (0.4, downscale_upscale), (0.5, jpeg)),
    "photo": ((0.6, perspective), (0.6, illumination), (0.4, motion_blur), (0.5, gaussian_blur),
              (0.6, gaussian_noise), (0.4, downscale_upscale), (0.8, jpeg)),
}


def degrade(img: Image, rng: np.random.Generator, profile: str | None = None, *, geometric: bool = True) -> Image:
    """Apply a random chain of degradations from ``PROFILES[profile]`` (random profile when ``None``).

    ``geometric=False`` skips rotation and perspective (for word crops whose geometry the renderer sets).
    """
    if profile is None:
        profile = sorted(PROFILES)[int(rng.integers(len(PROFILES)))]
    if profile not in PROFILES:
        raise ValueError(f"unknown degradation profile {profile!r}; expected one of {sorted(PROFILES)}")
    out = img
    for prob, op in PROFILES[profile]:
        if rng.random() < prob and (geometric or op not in (rotate, perspective)):
            out = op(out, rng)
    return out
