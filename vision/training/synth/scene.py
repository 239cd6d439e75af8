"""Scene text: words composited onto natural photographs, cut as a detector's axis-aligned box cuts them.

One sample: a word (often capitals) in a random font, with an optional sign panel behind it, outline, drop
shadow or emboss; its colours drawn from the photo patch it lands on (contrast varies from strong to weak);
bent along an arc, rotated (mostly a few degrees, sometimes steeply), sheared and perspective-warped; cut
along the axis-aligned hull of the warped word (so rotated words bring background corners along, as in
ICDAR 2015 crops); lit unevenly, blurred (defocus or motion), shrunk to a camera resolution of 8-48 rows,
with sensor noise and JPEG. Callable ``rng -> (HEIGHT x W x 3 uint8, text)`` like ``WordRenderer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.predictors.recognition.preprocess import HEIGHT
from vision.training.synth import degrade as D
from vision.training.synth.corpus import TextSampler
from vision.training.synth.fonts import FontInfo
from vision.training.synth.glyphs import GlyphCache
from vision.training.synth.photos import PhotoBank, contrasting, mean_colour
from vision.training.synth.textlayers import (
    FontPool,
    case_variant,
    composite,
    curve,
    finish,
    homography_crop,
    pick_text,
    stack_layers,
)

__all__ = ["SceneRenderer", "SceneSynthConfig"]

_SIZES = (16, 18, 20, 22, 25, 28, 32, 36, 40, 44)  # the word renderer's sizes: shared glyph caches


@dataclass(frozen=True)
class SceneSynthConfig:
    """Probabilities and ranges of the scene-text generator."""

    height: int = HEIGHT
    max_width: int = 192
    camera_height: tuple[int, int] = (9, 48)  # crop height in camera pixels
    p_low_res: float = 0.55
    p_panel: float = 0.45  # a flat sign panel behind the text
    p_outline: float = 0.15
    p_shadow: float = 0.2
    p_emboss: float = 0.05
    p_bold: float = 0.3
    p_spacing: float = 0.15
    p_curve: float = 0.12
    p_steep: float = 0.15  # rotation up to `steep_degrees` instead of `max_degrees`
    max_degrees: float = 6.0
    steep_degrees: float = 35.0
    perspective: float = 0.25
    p_motion: float = 0.25
    p_defocus: float = 0.5
    p_low_contrast: float = 0.1
    font_weights: tuple[tuple[str, float], ...] = (("sans", 2.0), ("bold", 1.5), ("condensed", 1.0))
    p_squeeze: float = 0.0  # letters narrowed to `squeeze` of their width (tall signage lettering)
    squeeze: tuple[float, float] = (0.4, 0.85)


class SceneRenderer:
    """Callable ``rng -> (image, text)``; picklable for DataLoader workers (photos shared when forked)."""

    def __init__(self, fonts: Sequence[FontInfo], sampler: TextSampler, photos: PhotoBank,
                 config: SceneSynthConfig = SceneSynthConfig(), glyphs: GlyphCache | None = None) -> None:
        self.config, self.sampler, self.photos = config, sampler, photos
        self.fonts = FontPool(fonts, dict(config.font_weights), glyphs)

    def __call__(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
        for _ in range(8):
            text = case_variant(pick_text(self.sampler, rng), rng)
            img = self.render(text, rng)
            if img is not None:
                return img, text
        return np.full((self.config.height, 16, 3), 128, np.uint8), ""  # pragma: no cover

    def render(self, text: str, rng: np.random.Generator) -> np.ndarray | None:
        cfg = self.config
        font = self.fonts.pick(text, rng)
        if font is None:
            return None
        lo, hi = cfg.camera_height
        mid = (lo + hi) // 2
        cam_h = int(rng.integers(lo, mid) if rng.random() < cfg.p_low_res else rng.integers(mid, hi + 1))
        # Render at about 1-2x the camera's text height: one warp lands on the camera grid without aliasing.
        px = next((s for s in _SIZES if s >= 1.2 * cam_h), _SIZES[-1])
        spacing = float(rng.uniform(0.02, 0.3)) * px if rng.random() < cfg.p_spacing else 0.0
        mask = self.fonts.mask(font, px, text, spacing)
        if mask.size == 0 or mask.shape[1] < 2:
            return None
        if cfg.p_squeeze and rng.random() < cfg.p_squeeze:  # drawn only when on: older recipes keep their stream
            narrow = max(2, round(mask.shape[1] * float(rng.uniform(*cfg.squeeze))))
            mask = cv2.resize(mask, (narrow, mask.shape[0]), interpolation=cv2.INTER_AREA)
        outline = int(rng.integers(1, max(2, px // 10) + 1)) if rng.random() < cfg.p_outline else 0
        shadow = None
        if rng.random() < cfg.p_shadow:
            d = float(rng.uniform(0.04, 0.12)) * px
            ang = float(rng.uniform(0, 2 * np.pi))
            shadow = (d * np.cos(ang), d * np.sin(ang), float(rng.uniform(0, 0.08)) * px)
        bold = int(rng.integers(1, 3)) if rng.random() < cfg.p_bold else 0
        panel = rng.random() < cfg.p_panel
        pad = float(rng.uniform(0.1, 0.9)) * px if panel else 0.0
        margin = int(0.25 * px + pad) + outline + 2
        layers = stack_layers(mask, margin, outline=outline, shadow=shadow, bold=bold, extra=1)
        h, w = mask.shape
        box = (margin, margin, margin + w, margin + h)
        if panel:  # a sign panel behind the text (becomes a quadrilateral with the warp)
            layers[max(0, int(margin - pad * 0.6)):int(margin + h + pad * 0.6),
                   max(0, int(margin - pad)):int(margin + w + pad), 3] = 255
        if rng.random() < cfg.p_curve:
            layers = curve(layers, rng, float(rng.uniform(0.05, 0.25)) * h)
        steep = rng.random() < cfg.p_steep
        degrees = float(rng.uniform(-1, 1)) * (cfg.steep_degrees if steep else cfg.max_degrees)
        # Crops are the hull of a quadrilateral that hugs the word; annotators leave 0-15% of the height.
        margins = tuple(float(v) for v in rng.uniform(-0.03, 0.18, 4))
        warped, (ch, cw) = homography_crop(layers, box, rng, degrees=degrees, persp=cfg.perspective * rng.random(),
                                           shear=float(rng.normal(0, 0.12)), margins=margins,
                                           out_height=cam_h)
        if cw > 8 * ch:
            return None
        bg = self.photos.patch(ch, cw, rng).astype(np.float32)
        img = self._paint(bg, warped, rng)
        img = self._light(img, rng)
        img = self._camera(img.astype(np.uint8), rng)
        return finish(img, cfg.max_width, cfg.height)

    # -- steps ---------------------------------------------------------------------------------------------
    def _paint(self, bg: np.ndarray, warped: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        cfg = self.config
        fill, outline, shadow, panel = (warped[..., i] for i in range(4))
        parts = []
        under = mean_colour(bg)
        if panel.any():
            panel_colour = rng.uniform(0, 255, 3).astype(np.float32)
            parts.append((panel, panel_colour, float(rng.uniform(0.85, 1.0))))
            under = panel_colour
        delta = 25.0 if rng.random() < cfg.p_low_contrast else 70.0
        text_colour = contrasting(under, rng, delta)
        if shadow.any():
            parts.append((shadow, rng.uniform(0, 50, 3), float(rng.uniform(0.5, 0.9))))
        if outline.any():
            parts.append((outline, contrasting(text_colour, rng, 90.0), 1.0))
        if rng.random() < cfg.p_emboss:  # relief: a light and a dark copy shifted apart
            k = np.float32([[1, 0, 1], [0, 1, 1]])
            lit = cv2.warpAffine(fill, k, fill.shape[::-1])
            parts.append((lit, np.full(3, 255.0, np.float32), 0.6))
            parts.append((fill, np.clip(under * 0.6, 0, 255), 1.0))
        else:
            tint = text_colour + rng.normal(0, 8, (1, 1, 3)).astype(np.float32) if rng.random() < 0.3 else text_colour
            parts.append((fill, tint, float(rng.uniform(0.8, 1.0))))
        return composite(bg, parts)

    def _light(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h, w = img.shape[:2]
        if rng.random() < 0.5:  # a linear gradient (shade) and sometimes a soft highlight
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            t = float(rng.uniform(0, 2 * np.pi))
            ramp = np.cos(t) * xx / max(w, 1) + np.sin(t) * yy / max(h, 1)
            ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6)
            img = img * (1.0 - float(rng.uniform(0.1, 0.5)) * ramp)[..., None]
            if rng.random() < 0.3:
                cx, cy = rng.uniform(0, w), rng.uniform(0, h)
                r = float(rng.uniform(0.3, 1.0)) * max(h, w)
                glow = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
                img = img + float(rng.uniform(30, 120)) * glow[..., None]
        if rng.random() < 0.3:  # overall exposure and colour cast
            img = img * rng.uniform(0.6, 1.3) + rng.normal(0, 12, 3)
        return np.clip(img, 0, 255)

    def _camera(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        cfg = self.config
        if rng.random() < cfg.p_defocus:
            img = D.gaussian_blur(img, rng, (0.3, 1.6))
        if rng.random() < cfg.p_motion:
            img = D.motion_blur(img, rng, (2, 5))
        if rng.random() < 0.3:
            img = D.downscale_upscale(img, rng, (0.5, 0.9))
        if rng.random() < 0.6:
            img = D.gaussian_noise(img, rng, (1.0, 10.0))
        if rng.random() < 0.7:
            img = D.jpeg(img, rng, (20, 90))
        return img
