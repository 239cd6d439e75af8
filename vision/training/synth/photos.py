"""Natural photographs as backgrounds for scene and overlay text (Debian's wallpaper packages).

:func:`prepare_photos` curates a carried folder from unpacked packages (``dpkg -x``): raster images of at
least 600 px on their short side, one file per wallpaper (the largest of its resolutions), downscaled to
``max_side`` and stored as JPEG, with ``photos.json`` listing each file's package, source path and the
license that package's ``copyright`` file states. Every 8th wallpaper is held out (``holdout/``, ``"split":
"holdout"`` in ``photos.json``): text-free negatives for detection, never used by the generators.
:class:`PhotoBank` loads the rest once (before DataLoader workers fork, so they share it) and cuts random
patches from them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

__all__ = ["LICENSES", "PhotoBank", "prepare_photos"]

# The license each package's debian/copyright states for its images (read from the files, Nov 2026).
LICENSES = {
    "gnome-backgrounds": "CC-BY-SA-3.0 (per image: Jakub Steiner, Garrett LeSage, Quinn Dombrowski, ...)",
    "plasma-workspace-wallpapers": "GPL-2+ (KDE Visual Design Group)",
    "mate-backgrounds": "GPL-2+ (per image authors in debian/copyright)",
    "ukui-wallpapers": "CC-BY-SA-3.0 (Ubuntu Kylin community contributors)",
    "desktop-base": "GPL-2+ (Debian desktop themes)",
}
_SKIP = re.compile(r"screenshot|preview|logo|grub|plymouth|icon|emblem|symbolic|debian-|focal|GreenTraditional",
                   re.IGNORECASE)
# (focal-ubuntukylin and GreenTraditional carry a version number or a logo with small text)
_RES = re.compile(r"[_-]?\d{3,4}x\d{3,4}")


def _key(package: str, path: Path) -> str:
    """One key per wallpaper: KDE stores sizes as ``NAME/contents/images/WxH.jpg``, others in the stem."""
    parts = path.parts
    if "contents" in parts:
        return f"{package}/{parts[parts.index('contents') - 1]}"
    return f"{package}/{_RES.sub('', path.stem).lower()}"


def prepare_photos(unpacked: str | Path, dst: str | Path, *, max_side: int = 640, quality: int = 88,
                   holdout_every: int = 8, min_side: int = 600) -> dict[str, list[str]]:
    """Curate ``unpacked/PACKAGE/...`` into ``dst`` (see the module docstring). Every ``holdout_every``-th
    wallpaper (sorted by name) goes to ``dst/holdout/`` instead. Returns ``{"train": [...], "holdout": [...]}``."""
    unpacked, dst = Path(unpacked), Path(dst)
    best: dict[str, tuple[int, Path, str]] = {}
    for pkg_dir in sorted(p for p in unpacked.iterdir() if p.is_dir()):
        for path in sorted(pkg_dir.rglob("*")):
            if path.suffix.lower() not in (".jpg", ".jpeg", ".png", ".webp") or _SKIP.search(str(path)):
                continue
            img = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if img is None or min(img.shape[:2]) < min_side or float(img.std()) < 20:
                continue  # too small, or a flat/transparent PNG (drawn as one colour)
            key = _key(pkg_dir.name, path.relative_to(pkg_dir))
            area = img.shape[0] * img.shape[1]
            if key not in best or area > best[key][0]:
                best[key] = (area, path, pkg_dir.name)
    out: dict[str, list[str]] = {"train": [], "holdout": []}
    records = []
    for i, key in enumerate(sorted(best)):
        _, path, package = best[key]
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        scale = max_side / max(img.shape[:2])
        if scale < 1:
            img = cv2.resize(img, (round(img.shape[1] * scale), round(img.shape[0] * scale)),
                             interpolation=cv2.INTER_AREA)
        split = "holdout" if i % holdout_every == holdout_every - 1 else "train"
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", key) + ".jpg"
        folder = dst / "holdout" if split == "holdout" else dst
        folder.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(folder / name), img, [cv2.IMWRITE_JPEG_QUALITY, quality])
        out[split].append(name)
        records.append({"file": name, "split": split, "package": package,
                        "source": str(path.relative_to(unpacked / package)), "license": LICENSES.get(package, "?")})
    (dst / "photos.json").write_text(json.dumps(records, indent=1))
    return out


class PhotoBank:
    """Decoded photos (RGB uint8) of a prepared folder (``holdout/`` excluded); :meth:`patch` cuts a random
    region resized to a requested size. Without photos it falls back to synthetic textures."""

    def __init__(self, folder: str | Path | None, *, limit: int = 0) -> None:
        files = sorted(Path(folder).glob("*.jpg")) if folder is not None and Path(folder).is_dir() else []
        files = files[:limit] if limit else files
        self.photos: list[np.ndarray] = []
        for f in files:
            img = cv2.imread(str(f), cv2.IMREAD_COLOR)
            if img is not None:
                self.photos.append(np.ascontiguousarray(img[..., ::-1]))

    def __len__(self) -> int:
        return len(self.photos)

    def patch(self, h: int, w: int, rng: np.random.Generator) -> np.ndarray:
        """A random ``h x w`` RGB region of a random photo (random zoom, optional flip), or a texture."""
        if not self.photos or rng.random() < 0.1:
            return texture(h, w, rng)
        photo = self.photos[int(rng.integers(len(self.photos)))]
        ph, pw = photo.shape[:2]
        zoom = float(rng.uniform(0.08, 0.6))  # the patch covers this share of the photo's short side
        ch = max(4, int(min(ph, pw) * zoom))
        cw = max(4, min(pw, int(ch * w / max(h, 1))))
        ch = max(4, min(ph, ch))
        y, x = int(rng.integers(0, ph - ch + 1)), int(rng.integers(0, pw - cw + 1))
        out = cv2.resize(photo[y:y + ch, x:x + cw], (w, h), interpolation=cv2.INTER_LINEAR)
        return out[:, ::-1].copy() if rng.random() < 0.5 else out


def texture(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A flat or gradient panel with low-frequency mottling (painted signs, walls, plastic)."""
    a, b = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    if rng.random() < 0.5:
        b = a + rng.normal(0, 25, 3)
    t = np.linspace(0, 1, w if rng.random() < 0.6 else h, dtype=np.float32)
    ramp = t[None, :, None] if len(t) == w else t[:, None, None]
    img = a + (b - a) * ramp
    img = np.broadcast_to(img, (h, w, 3)).astype(np.float32)
    blot = cv2.resize(rng.normal(0, float(rng.uniform(0, 20)), (max(1, h // 8), max(1, w // 8), 3))
                      .astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    return np.clip(img + blot.reshape(h, w, 3), 0, 255).astype(np.uint8)


def mean_colour(img: np.ndarray) -> np.ndarray:
    """Mean RGB of an image (float32, 3)."""
    return img.reshape(-1, 3).mean(0).astype(np.float32)


def contrasting(bg: np.ndarray, rng: np.random.Generator, min_delta: float = 60.0) -> np.ndarray:
    """A colour whose luminance differs from ``bg``'s by at least ``min_delta`` (text on that background)."""
    lum = float(bg @ np.float32([0.299, 0.587, 0.114]))
    for _ in range(20):
        c = rng.uniform(0, 255, 3).astype(np.float32)
        if rng.random() < 0.45:  # white/black/grey text is most common on signs
            c = np.full(3, 255.0 if lum < 128 else 0.0, np.float32) + rng.normal(0, 18, 3)
        if abs(float(np.clip(c, 0, 255) @ np.float32([0.299, 0.587, 0.114])) - lum) >= min_delta:
            return np.clip(c, 0, 255).astype(np.float32)
    return np.full(3, 255.0 if lum < 128 else 0.0, np.float32)


def sample_photos(names: Sequence[str]) -> str:
    """A short listing of photo file names for a model card."""
    return ", ".join(sorted(names))
