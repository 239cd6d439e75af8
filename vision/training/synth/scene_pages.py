"""Synthetic scene pages for the detector: text anywhere on natural photographs, with exact DB targets.

Kinds (:data:`SCENE_KINDS`), each a canvas the size of a camera frame seen at the predictor's input scale
(long side ``1024 x 2^U(-0.6, 0.3)``, 16:9, 4:3, 1:1 or portrait):

* ``scene``: a photo patch (:class:`~vision.training.synth.photos.PhotoBank`) with 1-14 text objects (signs,
  labels, loose lettering; :mod:`.scene_objects`), each rotated (mostly a few degrees, a quarter of them
  steeply, some vertical), seen aslant (perspective), sometimes bent along an arc; many small words; thin
  occluders (poles, wires, branches) drawn over them; non-text clutter (stripes, grids, dots, bars) that the
  detector must leave alone;
* ``document``: a document page (a PDF page or a synthetic page, receipts included) photographed: curled,
  rotated up to 30 degrees (sometimes 90), perspective, over a photo or desk background, with shadows and glare;
* ``overlay``: a video frame (photo) with subtitles, caption bars and a few signs, or a UI screen (rows of
  small text on flat theme colours);
* ``empty``: a photo with clutter and no text (negatives against invented words).

Then uneven light, defocus or motion blur, sensor noise and JPEG. Words too small to read once placed (under
6 px) and washed-out objects are ignore regions (``###``), masked out of the loss. A seed fixes the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from vision.training.losses.db import db_targets
from vision.training.synth import degrade as D
from vision.training.synth.page_degrade import desk_background, shadow, uneven_light
from vision.training.synth.pages import PageRenderer
from vision.training.synth.photos import PhotoBank, mean_colour
from vision.training.synth.scene_objects import text_object
from vision.training.synth.scene_warp import Canvas, Layer, bend, corner_jitter, place, similarity

__all__ = ["SCENE_KINDS", "ScenePage", "SceneRenderer"]

SCENE_KINDS: dict[str, float] = {"scene": 0.55, "document": 0.22, "overlay": 0.17, "empty": 0.06}
_ASPECTS = ((9, 16), (3, 4), (1, 1), (4, 3), (16, 9))  # H:W
_ASPECT_P = (0.45, 0.25, 0.08, 0.17, 0.05)


@dataclass
class ScenePage:
    """``image uint8[H, W, 3]``, DB ``targets`` (uint8 maps), word ``quads``/``ignore`` float32[N, 4, 2]."""

    image: np.ndarray
    targets: dict[str, np.ndarray]
    quads: np.ndarray
    ignore: np.ndarray
    kind: str


def _angle(rng: np.random.Generator) -> float:
    r = rng.random()
    if r < 0.55:
        return float(rng.normal(0, 4))
    if r < 0.9:
        return float(rng.uniform(-40, 40))
    return float(rng.choice([-90.0, 90.0]) + rng.normal(0, 5))  # vertical


def _word_height(rng: np.random.Generator, large: float = 0.0) -> float:
    """Placed word height in px: log-uniform 7-90, two thirds of the words under 24 px; with probability
    ``large`` log-uniform 90-240 instead (drawn first, so ``large=0`` keeps the seeds' pages)."""
    if large > 0 and rng.random() < large:
        return float(np.exp(rng.uniform(np.log(90), np.log(240))))
    return float(np.exp(rng.uniform(np.log(7), np.log(24)))) if rng.random() < 0.67 else float(
        np.exp(rng.uniform(np.log(24), np.log(90))))


class SceneRenderer:
    """``renderer(rng, kind=None) -> ScenePage``.

    Args:
        renderer: a :class:`PageRenderer` (fonts and words for the text objects; also the document pages).
        photos: the photo bank (held-out photos never in it).
        pages: optional ``rng -> (image, boxes)`` document source (PDF pages); the renderer's pages otherwise.
        long_side: the predictor's input long side.
        large_words: share of scene words drawn 90-240 px high (:func:`_word_height`).
    """

    def __init__(self, renderer: PageRenderer, photos: PhotoBank,
                 pages: Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]] | None = None,
                 long_side: int = 1024, shrink: float = 0.25, large_words: float = 0.0) -> None:
        self.renderer, self.photos, self.pages = renderer, photos, pages
        self.long_side, self.shrink, self.large_words = long_side, shrink, large_words
        self.kinds = list(SCENE_KINDS)
        self.kind_p = np.array([SCENE_KINDS[k] for k in self.kinds])

    def __call__(self, rng: np.random.Generator, kind: str | None = None) -> ScenePage:
        kind = kind or self.kinds[int(rng.choice(len(self.kinds), p=self.kind_p / self.kind_p.sum()))]
        ah, aw = _ASPECTS[int(rng.choice(len(_ASPECTS), p=_ASPECT_P))]
        long = self.long_side * 2 ** rng.uniform(-0.6, 0.3)
        h, w = (int(long * ah / max(ah, aw)), int(long * aw / max(ah, aw)))
        bg = self.photos.patch(h, w, rng)
        if rng.random() < 0.3:  # photos are small (640 px): add the fine grain a camera would have
            bg = np.clip(bg + rng.normal(0, 4, bg.shape[:2])[..., None], 0, 255).astype(np.uint8)
        canvas = Canvas.empty(bg)
        if kind == "document":
            self._document(canvas, rng)
            n_objects = int(rng.integers(0, 3))
        elif kind == "overlay":
            n_objects = self._overlay(canvas, rng)
        else:
            n_objects = 0 if kind == "empty" else int(rng.integers(1, 15))
        self._clutter(canvas, rng, int(rng.integers(0, 4 if kind != "empty" else 8)))
        for _ in range(n_objects):
            self._object(canvas, rng, str(rng.choice(["sign", "label", "loose"], p=[0.4, 0.35, 0.25])))
        if kind in ("scene", "document") and rng.random() < 0.35:
            self._occlude(canvas, rng)
        image = self._finish(canvas.image, rng)
        quads = np.asarray(canvas.quads, np.float32).reshape(-1, 4, 2)
        ignore = np.asarray(canvas.ignore, np.float32).reshape(-1, 4, 2)
        return ScenePage(image, canvas.maps, quads, ignore, kind)

    # -- objects ------------------------------------------------------------------------------------------
    def _object(self, canvas: Canvas, rng: np.random.Generator, kind: str, *, angle: float | None = None,
                at: tuple[float, float] | None = None, height: float | None = None) -> bool:
        H, W = canvas.maps["gt"].shape
        size = int(rng.choice([20, 24, 28, 34, 42, 52]))
        target = height if height is not None else _word_height(rng, self.large_words)
        if target > 90:  # a large sign: rendered at the largest size, so the warp enlarges it at most 5x
            size = 52
        scale = target / (size * 0.91)
        cx, cy = at if at is not None else (float(rng.uniform(0, W)), float(rng.uniform(0, H)))
        r0, r1 = int(np.clip(cy, 0, H - 1)), int(np.clip(cx, 0, W - 1))
        col = mean_colour(canvas.image[max(r0 - 8, 0):r0 + 8, max(r1 - 8, 0):r1 + 8])
        layer = text_object(kind, self.renderer, self.photos, rng, size, scale, background=col,
                            shrink=self.shrink)
        if kind in ("sign", "loose") and rng.random() < 0.15:
            layer = bend(layer, float(rng.uniform(-0.35, 0.35)))
        h, w = layer.alpha.shape
        if scale * max(h, w) > 1.3 * max(H, W):
            return False
        m = similarity(angle if angle is not None else _angle(rng), scale, w / 2, h / 2, cx, cy)
        if rng.random() < 0.5:
            m = m @ corner_jitter(w, h, rng, float(rng.uniform(0.02, 0.18)))
        return place(canvas, layer, m)

    def _overlay(self, canvas: Canvas, rng: np.random.Generator) -> int:
        H, W = canvas.maps["gt"].shape
        if rng.random() < 0.3:  # a UI screen: panels of rows over a flat theme colour
            theme = np.float32(rng.uniform(225, 255, 3) if rng.random() < 0.6 else rng.uniform(15, 60, 3))
            canvas.image[:] = theme
            for _ in range(int(rng.integers(2, 6))):
                self._object(canvas, rng, "ui", angle=0.0, height=float(rng.uniform(8, 18)))
            return int(rng.integers(0, 2))
        for i in range(int(rng.integers(1, 3))):  # subtitles at the bottom, centred
            self._object(canvas, rng, "subtitle", angle=0.0, height=float(rng.uniform(12, 34)),
                         at=(W / 2 + rng.normal(0, W * 0.02), H * (0.88 - 0.1 * i)))
        if rng.random() < 0.6:  # caption bars, lower thirds, tickers
            for _ in range(int(rng.integers(1, 3))):
                self._object(canvas, rng, "caption", angle=0.0, height=float(rng.uniform(10, 30)),
                             at=(float(rng.uniform(0.2, 0.8) * W), float(rng.uniform(0.05, 0.95) * H)))
        return int(rng.integers(0, 4))

    def _document(self, canvas: Canvas, rng: np.random.Generator) -> None:
        """A document photographed: page labels made in the page frame, curled and warped with the page."""
        H, W = canvas.maps["gt"].shape
        if self.pages is not None and rng.random() < 0.4:
            image, boxes = self.pages(rng)
        else:
            page = self.renderer(rng, layout="receipt" if rng.random() < 0.35 else None)
            image, boxes = page.image, page.boxes
        ph, pw = image.shape[:2]
        if rng.random() < 0.5:
            canvas.image[:] = desk_background((H, W), rng)
        cover = float(rng.uniform(0.6, 1.05))
        scale = cover * min(H / ph, W / pw) if rng.random() < 0.7 else cover * max(H / ph, W / pw)
        s0 = min(1.0, 1.4 * scale)  # render labels near the final scale (cheaper and exact)
        image = cv2.resize(image, (max(1, round(pw * s0)), max(1, round(ph * s0))), interpolation=cv2.INTER_AREA)
        boxes = np.asarray(boxes, np.float32).reshape(-1, 4) * s0
        ph, pw = image.shape[:2]
        small = (boxes[:, 3] - boxes[:, 1]) * scale / s0 < 6
        maps = db_targets(ph, pw, boxes[~small], ignore=boxes[small], shrink=self.shrink)
        layer = Layer(image.astype(np.float32), np.ones((ph, pw), np.float32), maps, boxes[~small], boxes[small])
        if rng.random() < 0.5:  # curl: a page or receipt bowing towards the camera
            layer = bend(layer, float(rng.uniform(-0.04, 0.04)), vertical=rng.random() < 0.5)
        h, w = layer.alpha.shape
        angle = float(rng.normal(0, 8)) if rng.random() < 0.85 else float(rng.choice([90, -90, 180]))
        m = similarity(angle, scale / s0, w / 2, h / 2, W * rng.uniform(0.35, 0.65), H * rng.uniform(0.35, 0.65))
        m = m @ corner_jitter(w, h, rng, float(rng.uniform(0.0, 0.12)))
        place(canvas, layer, m, overlap=1.0)
        canvas.taken[:] = 0  # small objects may lie on the page (stickers, a price tag)

    # -- non-text -----------------------------------------------------------------------------------------
    @staticmethod
    def _clutter(canvas: Canvas, rng: np.random.Generator, n: int) -> None:
        """Text-like non-text: stripes, grids, dots, bars, railings and blobs (labels stay background)."""
        H, W = canvas.maps["gt"].shape
        img = canvas.image
        for _ in range(n):
            x, y = int(rng.uniform(0, W)), int(rng.uniform(0, H))
            bw, bh = int(rng.uniform(20, W / 3)), int(rng.uniform(10, H / 4))
            col = rng.uniform(0, 255, 3).tolist()
            r = rng.random()
            if r < 0.3:  # stripes / railings / blinds
                step, t = int(rng.integers(4, 16)), int(rng.integers(1, 4))
                vertical = rng.random() < 0.5
                for k in range(0, bw if vertical else bh, step):
                    p0, p1 = ((x + k, y), (x + k, y + bh)) if vertical else ((x, y + k), (x + bw, y + k))
                    cv2.line(img, p0, p1, col, t)
            elif r < 0.5:  # dots, rivets, perforation
                step = int(rng.integers(5, 18))
                for yy in range(y, y + bh, step):
                    for xx in range(x, x + bw, step):
                        cv2.circle(img, (xx, yy), int(rng.integers(1, 4)), col, -1)
            elif r < 0.7:  # bars (a barcode, a grille)
                xx = x
                while xx < x + bw:
                    b = int(rng.integers(1, 5))
                    cv2.rectangle(img, (xx, y), (xx + b - 1, y + bh), col, -1)
                    xx += b + int(rng.integers(1, 6))
            elif r < 0.85:  # a grid of tiles / windows
                step = int(rng.integers(8, 30))
                for k in range(0, bw, step):
                    cv2.line(img, (x + k, y), (x + k, y + bh), col, 1)
                for k in range(0, bh, step):
                    cv2.line(img, (x, y + k), (x + bw, y + k), col, 1)
            else:  # blobs (leaves, stains)
                for _ in range(int(rng.integers(3, 12))):
                    c = (int(x + rng.uniform(0, bw)), int(y + rng.uniform(0, bh)))
                    ax = (int(rng.integers(2, 12)), int(rng.integers(2, 12)))
                    cv2.ellipse(img, c, ax, float(rng.uniform(0, 180)), 0, 360, col, -1)

    @staticmethod
    def _occlude(canvas: Canvas, rng: np.random.Generator) -> None:
        """Poles, wires, branches over the scene; words they hide become don't-care."""
        H, W = canvas.maps["gt"].shape
        occ = np.zeros((H, W), np.uint8)
        for _ in range(int(rng.integers(1, 4))):
            p0 = (int(rng.uniform(0, W)), int(rng.uniform(-H * 0.2, H * 0.3)))
            p1 = (int(p0[0] + rng.normal(0, W * 0.1)), int(rng.uniform(H * 0.7, H * 1.2)))
            if rng.random() < 0.5:
                p0, p1 = (p0[1] * W // H, p0[0] * H // W), (p1[1] * W // H, p1[0] * H // W)
            cv2.line(occ, p0, p1, 1, int(rng.integers(2, max(3, W // 25))))
        col = rng.uniform(0, 255, 3).astype(np.float32)
        sel = occ > 0
        canvas.image[sel] = col * rng.uniform(0.8, 1.2, (int(sel.sum()), 1)).astype(np.float32)
        labelled = sel & (canvas.maps["thresh_mask"] > 0)
        canvas.maps["mask"][labelled] = 0
        canvas.maps["gt"][sel] = 0
        canvas.maps["thresh_mask"][sel] = 0

    @staticmethod
    def _finish(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.clip(img, 0, 255).astype(np.uint8)
        if rng.random() < 0.4:
            out = uneven_light(out, rng, strength=(0.1, 0.6))
        if rng.random() < 0.2:
            out = shadow(out, rng)
        if rng.random() < 0.15:  # glare: a bright soft spot
            h, w = out.shape[:2]
            spot = np.zeros((h, w), np.float32)
            cv2.circle(spot, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), int(rng.uniform(0.05, 0.2) * w), 1, -1)
            spot = cv2.GaussianBlur(spot, (0, 0), w * 0.04) * float(rng.uniform(0.3, 0.8))
            out = np.clip(out + (255 - out.astype(np.float32)) * spot[..., None], 0, 255).astype(np.uint8)
        for p, op in ((0.35, D.gaussian_blur), (0.2, D.motion_blur), (0.2, D.contrast), (0.5, D.gaussian_noise),
                      (0.15, lambda im, r: D.downscale_upscale(im, r, (0.6, 0.9))), (0.7, D.jpeg)):
            if rng.random() < p:
                out = op(out, rng)
        return out
