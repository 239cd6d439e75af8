"""Probes and metrics: ``/healthz`` (process up), ``/readyz`` (models loaded), ``/metrics`` (Prometheus)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST

from vision.app.api.dependencies import get_runtime
from vision.app.api.errors import ApiError
from vision.app.api.runtime import Runtime
from vision.app.api.schemas import ErrorBody, HealthOut, ReadyOut

__all__ = ["router"]

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthOut, summary="Liveness")
async def healthz() -> dict:
    """The process answers HTTP (on the event loop: never queued behind OCR work in the thread pool)."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=ReadyOut,
    summary="Readiness",
    responses={503: {"model": ErrorBody, "description": "the batcher or the job runner is down"}},
)
async def readyz(request: Request) -> dict:
    """The predictors are built and the threads that serve them (batcher, job runner) are alive.

    Runs on the event loop with no dependencies, so it never waits for a thread-pool slot."""
    runtime: Runtime = request.app.state.runtime
    jobs = getattr(request.app.state, "jobs", None)
    if not runtime.ocr.batcher.alive or (jobs is not None and not jobs.runner.alive):
        raise ApiError(503, "not_ready", "the model batcher or the job runner is not running")
    return {
        "status": "ready",
        "models": runtime.models,
        "queue_depth": runtime.ocr.batcher.queued_items,
        "segmentation": runtime.sam is not None,
        "video": runtime.video,
    }


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "exposition text"}},
)
def metrics(runtime: Annotated[Runtime, Depends(get_runtime)]) -> Response:
    """Requests, latencies, batch sizes, queue depth, jobs by status (needs the API key unless
    ``metrics_open``)."""
    return Response(runtime.metrics.render(), media_type=CONTENT_TYPE_LATEST)
