"""Pydantic models of the service's requests and responses (they drive the OpenAPI schema at /docs).

The document models mirror :func:`vision.export.json.export_document` field by field; routes return that
function's dict, and these models document and validate it.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from vision.export.formats import DOCUMENT_FORMATS, FORMATS

__all__ = [
    "BlockOut",
    "DocumentOut",
    "ErrorBody",
    "HealthOut",
    "JobError",
    "JobKind",
    "JobOut",
    "JobStatus",
    "LineOut",
    "MaskOut",
    "OcrFormat",
    "PageOut",
    "ReadyOut",
    "RegionOut",
    "ResultFormat",
    "SegmentOut",
    "TimelineEntryOut",
    "WordOut",
]

Box = list[float]  # [x0, y0, x1, y1], relative to the page
PolygonOut = list[list[float]]  # four [x, y] points clockwise from the top-left corner


class ErrorBody(BaseModel):
    """Every error response: a stable code, a message for people and, for 422s, the validation details."""

    error: str = Field(examples=["limit_exceeded"])
    message: str = Field(examples=["page.png: 40000000 pixels exceed the 1000000 limit"])
    detail: list[dict[str, Any]] | None = None


class JobError(BaseModel):
    """Why a job failed: the same code and message a synchronous request would have answered."""

    error: str
    message: str


class WordOut(BaseModel):
    value: str
    confidence: float
    geometry: Box
    polygon: PolygonOut | None


class LineOut(BaseModel):
    geometry: Box | None
    words: list[WordOut]


class BlockOut(BaseModel):
    kind: str = Field(default="paragraph", description="title, heading, paragraph, list_item, caption, ...")
    geometry: Box | None
    lines: list[LineOut]


class TableCellOut(BaseModel):
    row: int
    col: int
    row_span: int
    col_span: int
    header: bool
    geometry: Box | None
    words: list[WordOut]


class TableOut(BaseModel):
    geometry: Box
    n_rows: int
    n_cols: int
    header_rows: int
    cells: list[TableCellOut]


class MaskRle(BaseModel):
    shape: list[int]
    counts: list[int]


class RegionOut(BaseModel):
    kind: str
    geometry: Box
    score: float
    polygon: PolygonOut | None
    mask: MaskRle | None


class PageOut(BaseModel):
    page_idx: int
    dimensions: list[int] = Field(description="[height, width] in pixels")
    orientation: int
    timestamp: float | None
    source: str | None
    blocks: list[BlockOut]
    regions: list[RegionOut]
    tables: list[TableOut] = Field(default_factory=list, description="the i-th block of kind table is tables[i]")
    warnings: list[str] = Field(
        default_factory=list,
        description="present when not empty: e.g. text in a script no shipped recognizer reads",
    )


class TimelineEntryOut(BaseModel):
    text: str
    start: float
    end: float
    confidence: float
    geometry: Box


class DocumentOut(BaseModel):
    """The versioned document JSON (see docs/formats.md)."""

    schema_version: int
    source: str | None
    pages: list[PageOut]
    timeline: list[TimelineEntryOut]


OcrFormat = Enum("OcrFormat", [(name, name) for name in DOCUMENT_FORMATS], type=str)
OcrFormat.__doc__ = "Output formats of ``POST /v1/ocr`` (:data:`vision.export.formats.DOCUMENT_FORMATS`)."
ResultFormat = Enum("ResultFormat", [(name, name) for name in FORMATS], type=str)
ResultFormat.__doc__ = "Output formats of a job result (every format; subtitles only make sense for videos)."


class JobStatus(str, Enum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


class JobKind(str, Enum):
    document = "document"
    video = "video"


class JobOut(BaseModel):
    """A job's state. ``done``/``total`` count pages (documents) or are 0/1 for videos."""

    id: str
    kind: JobKind
    status: JobStatus
    filename: str
    done: int
    total: int | None
    progress: float = Field(ge=0, le=1)
    attempts: int = Field(description="times the job was started; > 1 after a restart resumed it")
    error: JobError | None
    created_at: datetime
    updated_at: datetime


class MaskOut(BaseModel):
    score: float = Field(description="the model's predicted IoU of this mask")
    geometry: Box
    mask: MaskRle


class SegmentOut(BaseModel):
    """Masks for one prompt, best first."""

    width: int
    height: int
    masks: list[MaskOut]


class HealthOut(BaseModel):
    status: str = Field(examples=["ok"])


class ReadyOut(BaseModel):
    status: str = Field(examples=["ready"])
    models: dict[str, str] = Field(description="role -> architecture of each loaded model")
    queue_depth: int
    segmentation: bool
    video: bool
