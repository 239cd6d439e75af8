"""Rectify a photographed document: page mask -> quadrilateral -> perspective warp, ready for OCR.

The page mask comes from SAM when a predictor is given (a point prompt at the image centre, or the largest
plausible automatic mask), otherwise from an OpenCV fallback that needs no weights: paper is bright and
unsaturated, so ``value - saturation`` separates it from most backgrounds, shadows included. The quadrilateral
is fitted to the mask's outline with one least-squares line per side, which puts corners within a pixel or
two even when the outline is ragged. As a pipeline stage::

    pipe = ocr.pipeline.insert("detect", "rectify", RectifyStage(predictor=None))
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import cv2
import numpy as np

from vision.errors import VisionError
from vision.io.page import PageImage
from vision.ops.boxes import order_quad

__all__ = [
    "PageNotFound",
    "RectifyResult",
    "RectifyStage",
    "fit_quad",
    "page_mask_opencv",
    "page_mask_sam",
    "rectify",
    "warp_quad",
]

_WORK_SIDE = 1024  # detection runs on a copy whose long side is this (corners are scaled back)
_MAX_FILL = 0.97  # a "page" covering more of the photo leaves no background: it is a scan, or nothing was found


class PageNotFound(VisionError):
    """No plausible page outline in the photo."""


@dataclass
class RectifyResult:
    """A rectified page.

    Attributes:
        image: RGB uint8 ``(h, w, 3)`` page seen from the front.
        quad: ``(4, 2)`` float pixel corners in the photo, clockwise from top-left.
        mask: boolean ``(H, W)`` page mask over the photo.
        method: ``"opencv"``, ``"sam-prompt"`` or ``"sam-auto"``.
    """

    image: np.ndarray
    quad: np.ndarray
    mask: np.ndarray
    method: str


def page_mask_opencv(image: np.ndarray) -> np.ndarray:
    """Boolean ``(H, W)`` mask of the largest bright, unsaturated region (the page), holes filled."""
    hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
    paper = cv2.GaussianBlur(np.clip(hsv[..., 2].astype(np.int16) - hsv[..., 1], 0, 255).astype(np.uint8), (7, 7), 0)
    _, binary = cv2.threshold(paper, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    k = max(3, round(min(image.shape[:2]) / 100)) | 1  # ~1% of the short side closes text strokes and specks
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    binary = cv2.morphologyEx(cv2.morphologyEx(binary, cv2.MORPH_OPEN, kernel), cv2.MORPH_CLOSE, kernel)
    contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    mask = np.zeros(image.shape[:2], np.uint8)
    if contours:
        cv2.drawContours(mask, [max(contours, key=cv2.contourArea)], -1, 1, thickness=cv2.FILLED)
    return mask.astype(bool)


def page_mask_sam(image: np.ndarray, predictor: Any, mode: Literal["prompt", "auto"] = "prompt",
                  min_fraction: float = 0.1, max_fraction: float = 0.98) -> np.ndarray:
    """Boolean page mask from a :class:`~vision.predictors.segmentation.predictor.SamPredictor`.

    ``"prompt"``: the best mask for a foreground point at the image centre; ``"auto"``: the largest automatic
    mask covering ``min_fraction..max_fraction`` of the photo whose outline is close to a quadrilateral.
    """
    h, w = image.shape[:2]
    if mode == "prompt":
        predictor.set_image(image)
        pred = predictor.predict(points=[[w / 2, h / 2]], labels=[1], multimask=True)
        return pred.masks[0, int(pred.scores[0].argmax())]
    from vision.predictors.segmentation.automatic import SamAutomaticMaskGenerator

    regions = SamAutomaticMaskGenerator(predictor, points_per_side=16).generate(image)
    best, best_area = np.zeros((h, w), bool), 0
    for region in regions:
        area = int(region.mask.sum())
        if min_fraction * h * w <= area <= max_fraction * h * w and area > best_area and _quad_like(region.mask):
            best, best_area = region.mask, area
    return best


def _quad_like(mask: np.ndarray, min_fill: float = 0.85) -> bool:
    """Whether the mask fills most of the quadrilateral fitted to it."""
    quad = fit_quad(mask)
    return quad is not None and mask.sum() >= min_fill * cv2.contourArea(quad.astype(np.float32))


def _outline(mask: np.ndarray) -> np.ndarray | None:
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float64) if contours else None


def fit_quad(mask: np.ndarray, min_fraction: float = 0.05) -> np.ndarray | None:
    """``(4, 2)`` pixel corners (clockwise from top-left) of the quadrilateral best fitting the mask's outline,
    or ``None`` when the largest region is under ``min_fraction`` of the image or not four-sided.

    Corners come from a polygon approximation of the convex hull; each side is then re-fitted as a least-squares
    line through the outline points near it, and neighbouring lines are intersected.
    """
    pts = _outline(mask)
    if pts is None or cv2.contourArea(pts.astype(np.float32)) < min_fraction * mask.size:
        return None
    hull = cv2.convexHull(pts.astype(np.float32))
    peri = cv2.arcLength(hull, True)
    approx = None
    for eps in (0.01, 0.02, 0.03, 0.05, 0.08):
        candidate = cv2.approxPolyDP(hull, eps * peri, True)
        if len(candidate) == 4:
            approx = candidate.reshape(4, 2).astype(np.float64)
            break
    if approx is None:
        approx = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float64)
    corners = order_quad(approx)
    return _refine(corners, pts, tol=0.02 * peri)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """z component of the cross product of 2-D vectors (broadcast)."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _refine(corners: np.ndarray, pts: np.ndarray, tol: float) -> np.ndarray:
    """Re-fit each side to the outline points within ``tol`` of it, away from the corners, and intersect."""
    lines = []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        d = b - a
        length = np.linalg.norm(d)
        t = (pts - a) @ d / length**2
        dist = np.abs(_cross(d, pts - a)) / length
        near = pts[(dist < tol) & (t > 0.1) & (t < 0.9)]
        if len(near) < 10:
            lines.append((a, d / length))
            continue
        vx, vy, x0, y0 = cv2.fitLine(near.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    out = []
    for i in range(4):
        (p, u), (q, v) = lines[i - 1], lines[i]
        denom = _cross(u, v)
        if abs(denom) < 1e-6:
            return corners
        out.append(p + u * _cross(q - p, v) / denom)
    return order_quad(np.array(out))


def warp_quad(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Perspective-warp the quadrilateral ``(4, 2)`` (clockwise from top-left) to an upright rectangle whose
    sides are the longer of each pair of opposite sides."""
    q = np.asarray(quad, np.float32)
    width = int(round(max(np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[3]))))
    height = int(round(max(np.linalg.norm(q[3] - q[0]), np.linalg.norm(q[2] - q[1]))))
    target = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], np.float32)
    matrix = cv2.getPerspectiveTransform(q, target)
    return cv2.warpPerspective(image, matrix, (width, height), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE)


def rectify(image: np.ndarray, *, predictor: Any = None, mode: Literal["prompt", "auto"] = "prompt") -> RectifyResult:
    """Find the page in an RGB uint8 photo and return it seen from the front.

    Args:
        predictor: a SAM predictor, or ``None`` for the OpenCV fallback.
        mode: with a predictor, ``"prompt"`` (centre point) or ``"auto"`` (largest plausible automatic mask).

    Raises:
        PageNotFound: no region large and four-sided enough.
    """
    h, w = image.shape[:2]
    scale = min(1.0, _WORK_SIDE / max(h, w))
    small = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA) if scale < 1 else image
    if predictor is None:
        mask, method = page_mask_opencv(small), "opencv"
    else:
        mask, method = page_mask_sam(small, predictor, mode), f"sam-{mode}"
    quad = fit_quad(mask)
    if quad is None:
        raise PageNotFound(None, f"no four-sided page region found ({method})")
    if mask.mean() > _MAX_FILL:
        raise PageNotFound(None, f"the page region fills the whole photo: nothing to rectify ({method})")
    quad = quad / scale
    full_mask = cv2.resize(mask.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST).astype(bool)
    return RectifyResult(warp_quad(image, quad), quad, full_mask, method)


class RectifyStage:
    """Pipeline stage: rectify each page of a batch (``PageImage``, numpy page, a pipeline ``PageState``, or a
    record with ``.image``).

    The rectified page *is* the page from then on: for a ``PageState`` (``ocr_predictor(rectify=True)``, placed
    right after ``read``) both the working image and ``state.page`` are replaced, so word geometry,
    ``Page.dimensions`` and ``Page.image`` all describe the rectified page, and every export (hOCR, ALTO,
    the rasterised searchable PDF) is consistent with it. A rectified PDF page loses its text layer (its
    boxes were on the photo). Pages where no page outline is found pass through unchanged (a flat scan has no
    background to remove).
    """

    def __init__(self, predictor: Any = None, mode: Literal["prompt", "auto"] = "prompt") -> None:
        self.predictor = predictor
        self.mode = mode

    def _one(self, image: np.ndarray) -> np.ndarray:
        try:
            return rectify(image, predictor=self.predictor, mode=self.mode).image
        except PageNotFound:
            return image

    def __call__(self, batch: list[Any]) -> list[Any]:
        out = []
        for item in batch:
            if isinstance(item, PageImage):
                image = np.ascontiguousarray(self._one(item.image))
                out.append(replace(item, image=image))
            elif isinstance(item, np.ndarray):
                out.append(np.ascontiguousarray(self._one(item)))
            elif isinstance(getattr(item, "page", None), PageImage):  # a PageState: the page itself changes
                rectified = self._one(item.image)
                if rectified is not item.image:  # found a page outline
                    image = np.ascontiguousarray(rectified)
                    item.page = replace(item.page, image=image, original_size=image.shape[:2], text_layer=[])
                    item.image = image
                out.append(item)
            else:
                item.image = np.ascontiguousarray(self._one(item.image))
                out.append(item)
        return out
