"""The Gradio UI: one ``gr.Blocks`` calling the service's shared predictors.

Mounted at ``/ui`` by :func:`vision.app.api.create_app` (it then uses the app's runtime, so UI pages go
through the same dynamic batcher as REST requests), or served alone by ``vision ui``.
"""

from __future__ import annotations

import atexit
import hmac
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import numpy as np
from PIL import Image, ImageDraw

from vision.app.api.documents import ReadOptions, download_name, open_document
from vision.app.api.errors import ApiError
from vision.app.api.job_service import JobService
from vision.app.api.paging import ocr_chunks
from vision.app.api.runtime import Runtime, SamService, build_runtime
from vision.app.api.settings import ServiceSettings
from vision.errors import VisionError
from vision.export.formats import render as render_format
from vision.structures import Document, Page

__all__ = ["SAMPLE_PAGE", "build_ui", "draw_words", "launch_ui", "mount_ui", "segment_at"]

ASSETS = Path(__file__).resolve().parent.parent / "assets"
SAMPLE_PAGE = ASSETS / "sample_page.png"
BOX_COLOR = (255, 0, 0)  # pure red: absent from scanned pages, so the boxes stand out (and tests find them)
MASK_COLOR = np.array([30, 144, 255], dtype=np.float32)
_GALLERY_PAGES = 20  # pages drawn in the gallery; the text and downloads always hold every page


def draw_words(page: Page) -> np.ndarray:
    """The page image ``(H, W, 3)`` uint8 with a red rectangle around every recognised word."""
    if page.image is None:
        raise ValueError(f"page {page.page_idx} carries no image to draw on")
    canvas = Image.fromarray(page.image)
    draw = ImageDraw.Draw(canvas)
    height, width = page.image.shape[:2]
    line = max(1, round(min(height, width) / 500))
    for word in page.words:
        x0, y0, x1, y1 = word.geometry
        draw.rectangle((x0 * width, y0 * height, x1 * width, y1 * height), outline=BOX_COLOR, width=line)
    return np.asarray(canvas)


def _ocr_document(
    runtime: Runtime, path: str, progress: gr.Progress, jobs: JobService | None = None
) -> tuple[Document, bool]:
    """OCR a file as REST would: up to ``max_pages`` pages chunk by chunk within the pixel budget (so
    progress moves), longer documents as a job (when a job service runs), or a whole video; True for videos.
    """
    settings = runtime.settings
    name = Path(path).name
    with open_document(
        path, name, settings.limits.reader_limits(job=True), ReadOptions(), fps=settings.jobs.video_fps
    ) as doc:
        if doc.kind == "video":
            return _ocr_video(runtime, path, progress), True
        total = len(doc)
        if total > settings.limits.max_pages:
            if jobs is None:
                raise gr.Error(f"{name} has {total} pages, over {settings.limits.max_pages} (max_pages)")
            doc.close()
            return _ocr_as_job(jobs, path, name, progress), False
        pages: list[Page] = []
        chunks = ocr_chunks(
            doc,
            name,
            runtime.ocr,
            runtime.budget,
            chunk_pages=settings.jobs.chunk_pages,
            timeout_s=settings.limits.request_timeout_s,
            keep_images=True,  # the searchable PDF draws on them
        )
        for indices, chunk in chunks:
            progress((indices.start, total), desc="reading pages", unit="pages")
            pages += chunk
        return Document(pages=pages, source=name), False


def _ocr_as_job(jobs: JobService, path: str, name: str, progress: gr.Progress) -> Document:
    """Submit a long document as a job (persisted, resumable) and follow it to its end."""
    with open(path, "rb") as fh:
        job = jobs.submit(fh, name, ReadOptions(), None, size=os.path.getsize(path))
    while True:
        record = jobs.store.get(job.id)
        if record is None or record.status in ("failed", "cancelled"):
            reason = "deleted" if record is None else (record.error_message or record.status)
            raise gr.Error(f"job {job.id} for {name}: {reason}")
        if record.status == "succeeded":
            return jobs.result(record)
        progress((record.done, record.total or 0), desc=f"job {job.id}", unit="pages")
        time.sleep(0.5)


def _ocr_video(runtime: Runtime, path: str, progress: gr.Progress) -> Document:
    """OCR a video through the shared batcher; the first gallery frames keep their image for drawing."""
    from vision.pipelines.video.pipeline import VideoOCR, VideoOptions

    settings = runtime.settings
    kept: list[np.ndarray] = []
    seen = [0]

    def predictor(frames: list) -> Document:
        kept.extend(f.image for f in frames[: max(0, _GALLERY_PAGES - len(kept))])
        seen[0] += len(frames)
        progress(None, desc=f"{seen[0]} frames read")
        return runtime.ocr(frames)

    config = VideoOptions(
        fps=settings.jobs.video_fps,
        batch_size=settings.batching.max_size,
        workers=1,
        limits=settings.limits.reader_limits(job=True),
    )
    doc = VideoOCR(predictor, config)(path)
    for page, image in zip(doc.pages, kept, strict=False):  # only the first gallery frames kept theirs
        page.image = image
    doc.source = Path(path).name
    return doc


def _downloads(doc: Document, name: str, video: bool) -> list[str]:
    """Write JSON, Markdown, HTML, hOCR and a searchable PDF (documents; the PDF needs page images) or JSON,
    hOCR and SRT (videos) for download.

    Files go to a fresh folder under :func:`_download_root`; folders older than ``_KEEP_DOWNLOADS_S``
    are removed first (Gradio has copied them to its own cache by then), and the root at exit.
    """
    root = _download_root()
    cutoff = time.time() - _KEEP_DOWNLOADS_S
    for old in root.iterdir():
        if old.is_dir() and old.stat().st_mtime < cutoff:
            shutil.rmtree(old, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix="vision-ui-", dir=root))
    with_pdf = not video and all(p.image is not None for p in doc.pages)  # job results carry no images
    out = []
    for fmt in ("json", "hocr", "srt") if video else ("json", "md", "html", "hocr", "pdf"):
        if fmt == "pdf" and not with_pdf:
            continue
        path = folder / download_name(name, fmt)
        path.write_bytes(render_format(doc, fmt))
        out.append(str(path))
    return out


_KEEP_DOWNLOADS_S = 600.0
_ROOT: list[Path] = []


def _download_root() -> Path:
    """One temporary folder per process for UI downloads, removed when the process exits."""
    if not _ROOT or not _ROOT[0].is_dir():
        _ROOT[:] = [Path(tempfile.mkdtemp(prefix="vision-ui-"))]
        atexit.register(shutil.rmtree, _ROOT[0], True)
    return _ROOT[0]


def segment_at(sam: SamService, image: np.ndarray, x: float, y: float) -> np.ndarray:
    """The object under pixel ``(x, y)`` of an RGB ``(H, W, 3)`` image, tinted blue (its best mask)."""
    best = sam.segment(image, points=np.array([[x, y]], dtype=np.float64), labels=np.array([1]))[0]
    out = image.astype(np.float32)
    out[best.mask] = 0.45 * out[best.mask] + 0.55 * MASK_COLOR
    return out.astype(np.uint8)


def build_ui(
    runtime: Callable[[], Runtime],
    *,
    segmentation: bool = False,
    jobs: Callable[[], JobService | None] = lambda: None,
) -> gr.Blocks:
    """The Blocks app. ``runtime()`` returns the shared runtime at call time (it is built after the UI);
    ``jobs()`` the job service that takes documents over ``max_pages`` pages (none: they are refused)."""

    def ocr(path: str | None, progress: gr.Progress = gr.Progress()) -> tuple[list, str, list[str]]:  # noqa: B008
        if not path:
            raise gr.Error("Upload an image, a PDF or a video first.")
        try:
            doc, video = _ocr_document(runtime(), path, progress, jobs())
            downloads = _downloads(doc, Path(path).name, video)
        except VisionError as exc:
            raise gr.Error(str(exc)) from exc
        except ApiError as exc:  # job quotas, or a server too busy for the pixel budget
            raise gr.Error(str(exc.detail)) from exc
        except TimeoutError as exc:
            raise gr.Error(f"the server is busy ({exc}); retry later") from exc
        gallery = [
            (draw_words(p), f"{'frame' if video else 'page'} {i + 1}: {len(p.words)} words")
            for i, p in enumerate(doc.pages[:_GALLERY_PAGES])
            if p.image is not None
        ]
        return gallery, doc.render(), downloads

    def segment(image: np.ndarray | None, evt: gr.SelectData) -> np.ndarray:
        sam = runtime().sam
        if image is None or sam is None:
            raise gr.Error("Upload an image first.")
        return segment_at(sam, image, *evt.index)

    # Gradio's own cache of uploads and outputs: files older than an hour are removed every hour.
    with gr.Blocks(title="vision", analytics_enabled=False, delete_cache=(3600, 3600)) as demo:
        gr.Markdown("# vision\nOCR of images, PDFs and videos: words boxed on each page, text, downloads.")
        with gr.Tab("OCR"):
            with gr.Row():
                with gr.Column(scale=1):
                    upload = gr.File(
                        label="Image, PDF or video",
                        type="filepath",
                        elem_id="upload",
                        file_types=["image", ".pdf", "video"],
                    )
                    button = gr.Button("Read", variant="primary", elem_id="read")
                    if SAMPLE_PAGE.is_file():
                        gr.Examples(examples=[[str(SAMPLE_PAGE)]], inputs=[upload], label="Sample")
                    downloads = gr.File(label="Downloads", file_count="multiple", elem_id="downloads")
                with gr.Column(scale=2):
                    gallery = gr.Gallery(
                        label="Pages with word boxes",
                        format="png",
                        columns=1,
                        height=640,
                        object_fit="contain",
                        elem_id="pages",
                    )
                    text = gr.Textbox(label="Text", lines=14, elem_id="text")
            button.click(
                ocr, inputs=[upload], outputs=[gallery, text, downloads], api_name="ocr", concurrency_limit=2
            )
        if segmentation:
            with gr.Tab("Segment"):
                gr.Markdown("Upload an image, then click an object.")
                with gr.Row():
                    image = gr.Image(type="numpy", label="Image", elem_id="segment-input")
                    overlay = gr.Image(type="numpy", label="Mask", elem_id="segment-output")
                image.select(
                    segment, inputs=[image], outputs=[overlay], api_name="segment", concurrency_limit=1
                )
    return demo


def _auth(settings: ServiceSettings) -> Callable[[str, str], bool] | None:
    """With an API key configured, the UI asks for it as the password (any user name)."""
    if settings.api_key is None:
        return None
    key = settings.api_key.get_secret_value()
    return lambda _user, password: hmac.compare_digest(password.encode(), key.encode())


def _serving_options(settings: ServiceSettings) -> dict[str, Any]:
    """What mounting and launching the UI both pass to Gradio: auth, upload limit, assets, error display."""
    return {
        "auth": _auth(settings),
        "max_file_size": settings.limits.max_bytes,
        "allowed_paths": [str(ASSETS)],
        "ssr_mode": False,
        "show_error": True,
    }


def mount_ui(app: Any, settings: ServiceSettings, *, segmentation: bool, path: str = "/ui") -> None:
    """Mount the UI on the REST app; it uses ``app.state.runtime`` (built in the app's lifespan)."""
    blocks = build_ui(
        lambda: app.state.runtime, segmentation=segmentation, jobs=lambda: getattr(app.state, "jobs", None)
    )
    gr.mount_gradio_app(app, blocks, path=path, **_serving_options(settings))


def launch_ui(settings: ServiceSettings, *, host: str = "127.0.0.1", port: int = 7860) -> None:
    """``vision ui``: build the predictors and serve the UI alone until interrupted."""
    runtime = build_runtime(settings)
    segmentation = runtime.sam is not None
    try:
        build_ui(lambda: runtime, segmentation=segmentation).queue().launch(
            server_name=host, server_port=port, **_serving_options(settings)
        )
    finally:
        runtime.close()
