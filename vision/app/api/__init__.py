"""The REST service: ``create_app(settings)`` builds a FastAPI app; its predictors load once, in its lifespan.

Layout (FastAPI's "bigger applications"): ``settings`` (pydantic-settings), ``schemas`` (Pydantic models),
``dependencies`` (``Depends`` providers), ``routers/`` (ocr, jobs, segment, health), ``batching`` (dynamic
batching), ``jobs`` + ``job_runner`` + ``job_service`` (persistent jobs), ``metrics`` (Prometheus).
"""

from __future__ import annotations

import gc
import importlib.util
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from anyio import to_thread
from fastapi import FastAPI

from vision import __version__
from vision.app.api.body_limit import BodyLimitMiddleware
from vision.app.api.docs import install_docs
from vision.app.api.errors import install_error_handlers
from vision.app.api.job_service import JobService
from vision.app.api.metrics import Metrics, MetricsMiddleware
from vision.app.api.routers import health, jobs, ocr, segment
from vision.app.api.runtime import build_runtime
from vision.app.api.security import SecurityMiddleware
from vision.app.api.settings import ServiceSettings
from vision.io.page import PageImage
from vision.structures import Document

__all__ = ["ServiceSettings", "app_from_env", "create_app"]

log = logging.getLogger(__name__)

_FORM_OVERHEAD = 1 << 20  # multipart headers and the small option fields, on top of the file itself


def segmentation_enabled(settings: ServiceSettings) -> bool:
    """POST /v1/segment and the UI tab exist when a checkpoint is configured and SAM is in this build."""
    return (
        settings.models.sam_checkpoint is not None
        and importlib.util.find_spec("vision.predictors.segmentation.predictor") is not None
    )


def create_app(
    settings: ServiceSettings | None = None,
    *,
    predictor: Callable[[list[PageImage]], Document] | None = None,
    freeze_gc: bool = False,
) -> FastAPI:
    """Build the service.

    Args:
        settings: limits, models, batching, jobs, API key; read from ``VISION_*`` and the config file
            when omitted.
        predictor: an already built OCR predictor to serve instead of the one ``settings.models``
            describes (tests and embedding applications share one this way).
        freeze_gc: once everything is built, collect and ``gc.freeze()`` what exists (a server process:
            :func:`app_from_env`). The modules, the UI and (in-process) the models are some 400,000 objects
            that every full collection would scan, stopping every thread, the event loop included, for
            0.6-0.8 s on our loaded 2-core machine; frozen, a full collection scans only what requests made.
            Process-wide, so off for tests and embedding applications.
    """
    settings = settings or ServiceSettings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = await to_thread.run_sync(lambda: build_runtime(settings, metrics, predictor=predictor))
        job_service = JobService(runtime)
        job_service.start()
        app.state.runtime, app.state.jobs = runtime, job_service
        if freeze_gc:
            gc.collect()
            gc.freeze()
        try:
            yield
        finally:
            await to_thread.run_sync(job_service.stop)
            runtime.close()

    app = FastAPI(
        title="vision",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,  # served from the package by install_docs (no CDN)
        redoc_url=None,
        description="Document OCR (images, PDFs, videos) and segmentation. Errors are "
        '`{"error": CODE, "message": TEXT}`.',
    )
    app.state.settings = settings
    install_error_handlers(app)
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.limits.max_bytes + _FORM_OVERHEAD)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_middleware(SecurityMiddleware, settings=settings)  # added last: runs first
    install_docs(app)
    app.include_router(health.router)
    app.include_router(ocr.router)
    app.include_router(jobs.router)
    if segmentation_enabled(settings):
        app.include_router(segment.router)
    if settings.ui and importlib.util.find_spec("gradio") is None:
        log.warning("gradio is not installed (pip install 'vision-ocr[ui]'): no UI at /ui")
    elif settings.ui:
        from vision.app.ui import mount_ui

        mount_ui(app, settings, segmentation=segmentation_enabled(settings))
    return app


def app_from_env() -> FastAPI:
    """Factory for ``uvicorn --factory`` (each worker process builds its own app from ``VISION_*``).

    Freezes the objects built at start-up out of the garbage collector's scans (``freeze_gc``) and sets the
    process's thread switch interval (``switch_interval_ms``: a thread that wants the GIL, the event loop
    answering a probe, waits at most that long for a running holder to drop it). Both are process-wide, so
    only here, in a server process, never in :func:`create_app` (tests and embedding applications)."""
    settings = ServiceSettings()
    sys.setswitchinterval(settings.switch_interval_ms / 1000)
    return create_app(settings, freeze_gc=True)
