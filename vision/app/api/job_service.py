"""Jobs for long work: documents and videos OCR'd in checkpointed chunks through the shared OCR service.

Each finished chunk of pages (or frames) is written to ``<job>/pages/NNNNNN.json`` before progress is
recorded, so a job interrupted by a crash resumes at its first page without a checkpoint; a resumed video
starts sampling there, and its timeline is merged over all frames at the end. All model calls go through
the shared :class:`~vision.app.api.runtime.OcrService` (and its dynamic batcher).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from vision.app.api.priority import background_thread
from vision.app.api.documents import ReadOptions, iter_pages, open_document
from vision.app.api.errors import ApiError
from vision.app.api.job_cleanup import expire, remove_orphans, stored_bytes
from vision.app.api.job_runner import JobContext, JobRunner
from vision._atomic import write_atomically
from vision.app.api.job_store import JobRecord, JobStore
from vision.app.api.paging import ocr_chunks
from vision.app.api.runtime import Runtime
from vision.errors import PasswordRequired
from vision.structures import Document

__all__ = ["JobService"]


class JobService:
    """Submit, inspect, cancel and fetch jobs; a :class:`JobRunner` runs them in the background."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        cfg = runtime.settings.jobs
        self.store = JobStore(cfg.dir)
        self.runner = JobRunner(
            self.store,
            self._handle,
            workers=cfg.workers,
            max_attempts=cfg.max_attempts,
            stale_after_s=cfg.stale_after_s,
        )
        runtime.metrics.watch_jobs(self.store.counts)
        self._secrets: dict[str, str] = {}  # job id -> PDF password, never written to disk

    def start(self) -> None:
        """Remove what a crashed process left behind and expired jobs, then start running jobs."""
        remove_orphans(self.store)
        expire(self.store, self.runtime.settings.jobs.retention_s)
        self.runner.start()

    def stop(self) -> None:
        self.runner.stop()

    def submit(
        self,
        src: BinaryIO,
        filename: str,
        read: ReadOptions,
        fps: float | None,
        *,
        size: int = 0,
        lang: str | None = None,
        geometry: dict[str, bool | str] | None = None,
    ) -> JobRecord:
        """Check that the upload opens within the job limits, store it and queue the job; ``lang`` and
        ``geometry`` (:class:`OCROptions` fields, :func:`~vision.pipelines.ocr.options.orientation_changes`)
        pick the predictor as for ``POST /v1/ocr`` (:meth:`OcrService.variant`).

        Raises:
            VisionError: the upload is not a readable image, PDF or video, or exceeds a limit.
            ApiError: 422 for a video when this build has no video OCR.
        """
        self._check_quota(size)
        staged = self.store.stage(src)
        try:
            with open_document(
                staged, filename, self._limits(), read, fps=fps or self.runtime.settings.jobs.video_fps
            ) as doc:
                kind = "video" if doc.kind == "video" else "document"
                total = None if kind == "video" else len(doc)
            if kind == "video" and not self.runtime.video:
                raise ApiError(422, "video_unavailable", f"{filename}: this server has no video OCR pipeline")
            options: dict[str, Any] = {
                "pages": read.pages,
                "dpi": read.dpi,
                "encrypted": read.password is not None,  # the password itself stays in memory only
                "fps": fps,
                "lang": lang,
                "geometry": geometry or {},
            }
            job = self.store.create(kind, filename, staged, options, total=total)
            if read.password is not None:
                self._secrets[job.id] = read.password
        finally:
            staged.unlink(missing_ok=True)
        self.runner.wake()
        return job

    def _check_quota(self, size: int) -> None:
        """429 when the job count is at its quota or ``size`` more bytes would pass the storage quota
        (expired jobs are deleted first)."""
        cfg = self.runtime.settings.jobs
        expire(self.store, cfg.retention_s)
        counts = self.store.counts()
        if counts["queued"] + counts["running"] >= cfg.max_active:
            raise ApiError(
                429,
                "job_quota",
                f"{cfg.max_active} jobs are queued or running (max_active); retry later",
                headers={"Retry-After": "10"},
            )
        if stored_bytes(self.store) + size > cfg.max_stored_bytes:
            raise ApiError(
                429,
                "job_quota",
                f"job storage is full ({cfg.max_stored_bytes} bytes, max_stored_bytes); "
                "delete finished jobs or retry later",
                headers={"Retry-After": "60"},
            )

    def cancel(self, job: JobRecord) -> JobRecord:
        """Cancel a queued or running job and forget its password."""
        self._secrets.pop(job.id, None)
        return self.store.cancel(job.id) or job

    def delete(self, job: JobRecord) -> JobRecord:
        """Delete a finished job with its files; a job still in use (cancelled, stopping) is kept."""
        if not self.store.in_use(job):
            self.store.delete(job.id)
        return job

    def result(self, job: JobRecord) -> Document:
        """The finished job's document (page images are not stored; see :meth:`attach_images`)."""
        return Document.from_json(self.store.result_path(job.id).read_text(encoding="utf-8"))

    def attach_images(self, job: JobRecord, doc: Document) -> None:
        """Re-read the job's input to put page images back on ``doc`` (for searchable PDFs)."""
        with open_document(self.store.input_path(job), job.filename, self._limits(), self._read(job)) as src:
            for page, image in zip(doc.pages, iter_pages(src, job.filename), strict=True):
                page.image = image.image

    def _limits(self) -> Any:
        return self.runtime.settings.limits.reader_limits(job=True)

    def _read(self, job: JobRecord) -> ReadOptions:
        pages = job.options.get("pages")
        password = self._secrets.get(job.id)
        if job.options.get("encrypted") and password is None:
            raise PasswordRequired(
                job.filename,
                "the password is kept in memory only and this server process does not hold it "
                "(it restarted, or another worker took the job): submit the job again",
            )
        return ReadOptions(
            pages=None if pages is None else tuple(pages),
            dpi=job.options.get("dpi") or 144.0,
            password=password,
        )

    def _handle(self, job: JobRecord, ctx: JobContext) -> None:
        background_thread(self.runtime.settings.worker_nice)  # a job worker thread: yields to the event loop
        try:
            if job.kind == "video":
                self._video(job, ctx)
            else:
                self._document(job, ctx)
        finally:
            self._secrets.pop(job.id, None)  # the job ended (or this process stops): drop its password

    def _document(self, job: JobRecord, ctx: JobContext) -> None:
        chunks = _Checkpoints(self.store.job_dir(job.id) / "pages")
        size = self.runtime.settings.jobs.chunk_pages
        with open_document(self.store.input_path(job), job.filename, self._limits(), self._read(job)) as src:
            total = len(src)
            done = len(chunks.load())
            ctx.checkpoint(done, total)
            budget = self.runtime.budget
            service = self._service(job)
            for indices, pages in ocr_chunks(src, job.filename, service, budget, first=done, chunk_pages=size):
                chunks.save(indices.start, pages)
                ctx.checkpoint(indices.stop, total)
        result = Document(pages=chunks.load(), source=job.filename).to_json()
        write_atomically(self.store.result_path(job.id), result, durable=True)

    def _service(self, job: JobRecord) -> Any:
        """The OCR service for the job's ``lang`` and geometry options (the server's own without them)."""
        return self.runtime.ocr.variant(lang=job.options.get("lang"), **job.options.get("geometry", {}))

    def _video(self, job: JobRecord, ctx: JobContext) -> None:
        """Frames are OCR'd in batches, each saved before progress is recorded; a resumed job starts
        sampling at the first frame without a checkpoint, and the timeline is merged over all frames."""
        from vision.pipelines.video.timeline import video_document
        from vision.pipelines.video.pipeline import VideoOCR, VideoOptions

        chunks = _Checkpoints(self.store.job_dir(job.id) / "pages")
        interval = 1.0 / (job.options.get("fps") or self.runtime.settings.jobs.video_fps)
        done = len(chunks.load())
        total: list[int | None] = [None]

        class Progress:
            def started(self, source: str, expected_frames: int | None) -> None:
                total[0] = None if expected_frames is None else done + expected_frames
                ctx.checkpoint(done, total[0])

            def advanced(self, source: str, frames: int) -> None:
                pass

        def predictor(frames: list) -> Document:
            nonlocal done
            doc = self._service(job)(frames)
            for i, (page, frame) in enumerate(zip(doc.pages, frames, strict=True)):
                page.page_idx, page.timestamp, page.image = done + i, frame.timestamp, None
            chunks.save(done, doc.pages)
            done += len(frames)
            ctx.checkpoint(done, total[0])
            return doc

        config = VideoOptions(
            fps=1.0 / interval,
            start=done * interval if done else None,
            workers=1,
            batch_size=self.runtime.settings.jobs.chunk_pages,
            limits=self._limits(),
        )
        for result in VideoOCR(predictor, config).run([self.store.input_path(job)], progress=Progress()):
            if result.error is not None:
                raise result.error
        pages = chunks.load()
        end = None if not pages else max(p.timestamp or 0.0 for p in pages) + interval
        doc = video_document(pages, source=job.filename, interval=interval, end=end)
        write_atomically(self.store.result_path(job.id), doc.to_json(), durable=True)


class _Checkpoints:
    """Finished pages of a job, saved as ``NNNNNN.json`` documents named by their first page's position."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(exist_ok=True)

    def save(self, first: int, pages: list) -> None:
        write_atomically(self.folder / f"{first:06d}.json", Document(pages=pages).to_json(), durable=True)

    def load(self) -> list:
        """Pages of the unbroken run of checkpoints from position 0."""
        pages: list = []
        while (path := self.folder / f"{len(pages):06d}.json").is_file():
            chunk = Document.from_json(path.read_text(encoding="utf-8")).pages
            if not chunk:
                break
            pages.extend(chunk)
        return pages
