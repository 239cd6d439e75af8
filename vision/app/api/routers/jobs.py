"""``/v1/jobs``: long work (big PDFs, videos) submitted, polled, fetched and cancelled; persisted on disk."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Path, Query, Response, UploadFile

from vision.app.api.dependencies import (
    get_jobs,
    get_limits,
    ocr_geometry,
    ocr_lang,
    read_options,
    require_api_key,
)
from vision.export.formats import FORMATS
from vision.app.api.documents import ReadOptions, check_size, response
from vision.app.api.errors import ApiError
from vision.app.api.priority import background_thread
from vision.app.api.job_service import JobService
from vision.app.api.job_store import ACTIVE, JobRecord
from vision.app.api.routers.ocr import ERROR_RESPONSES
from vision.app.api.security import check_filename
from vision.app.api.schemas import DocumentOut, ErrorBody, JobOut, ResultFormat
from vision.app.api.settings import LimitSettings

__all__ = ["router"]

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], dependencies=[Depends(require_api_key)])

JobId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$", description="the id returned by POST /v1/jobs")]
_NOT_FOUND = {404: {"model": ErrorBody, "description": "no such job"}}
_AUTH = {401: ERROR_RESPONSES[401], 422: {"model": ErrorBody, "description": "invalid job id or options"}}
_FPS_DOC = "frames sampled per second of video (default: the server's setting)"


def _job(jobs: JobService, job_id: str) -> JobRecord:
    job = jobs.store.get(job_id)
    if job is None:
        raise ApiError(404, "job_not_found", f"no job {job_id}")
    return job


@router.post(
    "",
    status_code=202,
    response_model=JobOut,
    summary="Submit a document or video job",
    responses=ERROR_RESPONSES,
)
def submit_job(
    response: Response,
    file: Annotated[UploadFile, File(description="an image, a PDF or a video")],
    read: Annotated[ReadOptions, Depends(read_options)],
    limits: Annotated[LimitSettings, Depends(get_limits)],
    jobs: Annotated[JobService, Depends(get_jobs)],
    geometry: Annotated[dict[str, bool | str], Depends(ocr_geometry)],
    lang: Annotated[str | None, Depends(ocr_lang)] = None,
    fps_query: Annotated[float | None, Query(alias="fps", gt=0, le=60, description=_FPS_DOC)] = None,
    fps_form: Annotated[float | None, Form(alias="fps", gt=0, le=60, description=_FPS_DOC)] = None,
) -> dict:
    """Queue the upload; poll ``GET /v1/jobs/{id}``, then fetch ``GET /v1/jobs/{id}/result``.

    ``lang``, ``orientation`` and ``rotated`` work as on ``POST /v1/ocr``."""
    background_thread(jobs.runtime.settings.worker_nice)
    filename = check_filename(file.filename)
    size = check_size(file, limits.max_bytes)
    fps = fps_query if fps_query is not None else fps_form
    job = jobs.submit(file.file, filename, read, fps, size=size, lang=lang, geometry=geometry)
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    return job.to_json()


@router.get(
    "/{job_id}",
    response_model=JobOut,
    summary="A job's status and progress",
    responses={**_AUTH, **_NOT_FOUND},
)
def get_job(job_id: JobId, jobs: Annotated[JobService, Depends(get_jobs)]) -> dict:
    """Status (queued, running, succeeded, failed, cancelled), pages done of total, attempts, error."""
    return _job(jobs, job_id).to_json()


@router.get(
    "/{job_id}/result",
    response_model=DocumentOut,
    summary="A finished job's result",
    responses={
        **_AUTH,
        **_NOT_FOUND,
        200: {
            "content": {FORMATS[f].media_type: {} for f in ResultFormat.__members__},
            "description": "the result",
        },
        409: {"model": ErrorBody, "description": "the job has not succeeded (yet)"},
        413: {"model": ErrorBody, "description": "too many pages for a searchable PDF"},
    },
)
def get_result(
    job_id: JobId,
    jobs: Annotated[JobService, Depends(get_jobs)],
    limits: Annotated[LimitSettings, Depends(get_limits)],
    fmt: Annotated[
        ResultFormat, Query(alias="format", description=", ".join(FORMATS))
    ] = (ResultFormat.json),
) -> Response:
    """The result in the requested ``format``; ``409`` unless the job succeeded."""
    background_thread(jobs.runtime.settings.worker_nice)  # exports and searchable PDFs take CPU
    job = _job(jobs, job_id)
    if job.status != "succeeded":
        reason = f": {job.error_message}" if job.error_message else ""
        raise ApiError(409, f"job_{job.status}", f"job {job_id} is {job.status}{reason}")
    doc = jobs.result(job)
    if fmt is ResultFormat.pdf:
        if job.kind == "video" or len(doc.pages) > limits.max_pages:
            raise ApiError(
                413,
                "limit_exceeded",
                f"a searchable PDF is made for documents of at most "
                f"{limits.max_pages} pages (max_pages); fetch json, hocr or alto instead",
            )
        jobs.attach_images(job, doc)
    return response(doc, fmt.value, job.filename)


@router.delete(
    "/{job_id}",
    response_model=JobOut,
    summary="Cancel a job, or delete a finished one",
    responses={**_AUTH, **_NOT_FOUND},
)
def delete_job(job_id: JobId, jobs: Annotated[JobService, Depends(get_jobs)]) -> dict:
    """A queued or running job is cancelled (a running one stops at its next checkpoint) and kept;
    a finished job is deleted with its files once no worker uses them (repeat the DELETE for a job
    that was just cancelled). Returns the job's last state."""
    job = _job(jobs, job_id)
    if job.status in ACTIVE:
        return jobs.cancel(job).to_json()
    return jobs.delete(job).to_json()
