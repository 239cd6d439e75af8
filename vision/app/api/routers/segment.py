"""``POST /v1/segment``: SAM masks for point and box prompts on an uploaded image.

Mounted only when a SAM checkpoint is configured. Prompts use the house geometry convention: coordinates
relative to the image, in [0, 1].
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Depends, File, Form, UploadFile

from vision.app.api.dependencies import get_budget, get_limits, get_sam, require_api_key
from vision.app.api.documents import ReadOptions, check_size, iter_pages, open_document
from vision.app.api.errors import ApiError
from vision.app.api.routers.ocr import ERROR_RESPONSES, ocr_errors
from vision.app.api.runtime import SamService
from vision.app.api.schemas import SegmentOut
from vision.app.api.security import check_filename
from vision.app.api.settings import LimitSettings
from vision.io.budget import PixelBudget
from vision.structures import mask_to_rle

__all__ = ["parse_prompt", "router"]

router = APIRouter(prefix="/v1", tags=["segment"], dependencies=[Depends(require_api_key)])


def _json_array(name: str, text: str | None) -> np.ndarray | None:
    if text is None or not text.strip():
        return None
    try:
        value = np.asarray(json.loads(text), dtype=np.float64)
    except (ValueError, TypeError):
        raise ApiError(422, "invalid_prompt", f"{name}: not a JSON array of numbers") from None
    if not np.isfinite(value).all():
        raise ApiError(422, "invalid_prompt", f"{name}: values must be finite")
    return value


def parse_prompt(
    points: str | None, labels: str | None, box: str | None, height: int, width: int
) -> dict[str, Any]:
    """Relative JSON prompts -> pixel arrays for :meth:`SamService.segment` (422 on any mistake)."""
    pts, lbl, bx = _json_array("points", points), _json_array("labels", labels), _json_array("box", box)
    if pts is None and bx is None:
        raise ApiError(422, "invalid_prompt", "give points, a box, or both")
    scale = np.array([width, height], dtype=np.float64)
    out: dict[str, Any] = {"points": None, "labels": None, "box": None}
    if pts is not None:
        if (
            pts.ndim != 2
            or pts.shape[1] != 2
            or not 1 <= len(pts) <= 64
            or not ((pts >= 0) & (pts <= 1)).all()
        ):
            raise ApiError(422, "invalid_prompt", "points: expected 1 to 64 [x, y] pairs in [0, 1]")
        lbl = np.ones(len(pts)) if lbl is None else lbl
        if lbl.shape != (len(pts),) or not np.isin(lbl, (0, 1)).all():
            raise ApiError(
                422, "invalid_prompt", "labels: expected one 0 (background) or 1 (object) per point"
            )
        out["points"], out["labels"] = pts * scale, lbl.astype(np.int64)
    if bx is not None:
        if bx.shape != (4,) or not ((bx >= 0) & (bx <= 1)).all() or bx[0] > bx[2] or bx[1] > bx[3]:
            raise ApiError(
                422, "invalid_prompt", "box: expected [x0, y0, x1, y1] in [0, 1] with x0 <= x1, y0 <= y1"
            )
        out["box"] = bx * np.tile(scale, 2)
    return out


def _mask_box(mask: np.ndarray) -> list[float]:
    """Relative ``[x0, y0, x1, y1]`` around a boolean ``(H, W)`` mask (zeros when it is empty)."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return [0.0, 0.0, 0.0, 0.0]
    h, w = mask.shape
    return [xs.min() / w, ys.min() / h, (xs.max() + 1) / w, (ys.max() + 1) / h]


@router.post(
    "/segment", response_model=SegmentOut, summary="Segment an object with SAM", responses=ERROR_RESPONSES
)
def segment(
    file: Annotated[UploadFile, File(description="an image")],
    limits: Annotated[LimitSettings, Depends(get_limits)],
    sam: Annotated[SamService, Depends(get_sam)],
    budget: Annotated[PixelBudget, Depends(get_budget)],
    points: Annotated[str | None, Form(max_length=4000, description="JSON [[x, y], ...] in [0, 1]")] = None,
    labels: Annotated[
        str | None, Form(max_length=1000, description="JSON [1, 0, ...]: object/background")
    ] = None,
    box: Annotated[str | None, Form(max_length=200, description="JSON [x0, y0, x1, y1] in [0, 1]")] = None,
    multimask: Annotated[bool, Form(description="return three candidate masks instead of one")] = False,
) -> dict:
    """Masks for the prompt, best predicted IoU first, run-length encoded (see docs/formats.md)."""
    filename = check_filename(file.filename)
    check_size(file, limits.max_bytes)
    with open_document(file.file, filename, limits.reader_limits(), ReadOptions()) as doc:
        if doc.kind != "image":
            raise ApiError(415, "unsupported_format", f"{filename}: segmentation takes an image")
        timeout = limits.request_timeout_s
        with ocr_errors(timeout), budget.hold(doc.page_pixels(0), timeout, source=filename):
            image = next(iter_pages(doc, filename)).image
            height, width = image.shape[:2]
            prompt = parse_prompt(points, labels, box, height, width)
            masks = sam.segment(image, multimask=multimask, **prompt)
    return {
        "width": width,
        "height": height,
        "masks": [
            {"score": m.score, "geometry": _mask_box(m.mask), "mask": mask_to_rle(m.mask)} for m in masks
        ],
    }
