"""Service settings (pydantic-settings): ``VISION_*`` environment variables, a TOML/JSON file, defaults.

Precedence, highest first: keyword arguments, environment variables, the config file, field defaults.
Nested groups use ``__`` in environment variables, e.g. ``VISION_LIMITS__MAX_BYTES=10000000`` or
``VISION_BATCHING__MAX_SIZE=16``; the config file is named by ``config_file=`` or ``VISION_CONFIG_FILE``::

    api_key = "s3cret"
    [limits]
    max_pages = 20
    [models]
    det_weights = "random"
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    JsonConfigSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from vision.settings import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from vision.pipelines.ocr.options import OCROptions

__all__ = ["BatchSettings", "JobSettings", "LimitSettings", "ModelSettings", "ServiceSettings"]

_CONFIG_ENV = "VISION_CONFIG_FILE"

SERVICE_GPU_REPLICAS = 4
"""``models.replicas`` on a CUDA device when not set. One H200 with 16 cores under 64 clients posting the
sample page (``benchmarks/load_test.py``, ``docs/service.md``): 4, 6 and 12 replicas read 40.7, 38.5 and
35.0-35.8 pages/s, one replica 13.9-15.5; past 4 the front process (HTTP, decoding, dependencies), not the
models, bounds it."""


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LimitSettings(_Group):
    """Per-request input limits; each maps onto :class:`vision.settings.Limits` or the request itself."""

    max_bytes: int = Field(50 * 1024**2, gt=0, description="largest uploaded file, in bytes")
    max_pixels: int = Field(
        100_000_000, gt=0, description="largest decoded page (width*height); A4 at 1000 dpi is 97 MP"
    )
    max_pages: int = Field(20, gt=0, description="most pages in a synchronous POST /v1/ocr request")
    job_max_pages: int = Field(2_000, gt=0, description="most pages in one job (POST /v1/jobs)")
    max_frames: int = Field(3_600, gt=0, description="most frames sampled from one video job")
    request_timeout_s: float = Field(60.0, gt=0, description="longest synchronous request, queueing included")
    memory_budget_bytes: int = Field(
        3 * 1024**3,
        gt=0,
        description="resident memory the server process is sized for (see max_inflight_pixels)",
    )
    max_inflight_pixels: int = Field(
        200_000_000,
        gt=0,
        description="decoded pixels held at once by every request, job and UI session together "
        "(decoding peaks near 7 bytes per pixel: tests/security/test_reader_bombs.py)",
    )
    max_request_pixels: int = Field(
        400_000_000,
        gt=0,
        description="most decoded pixels in one synchronous POST /v1/ocr (20 A4 pages at 600 dpi are 700 MP: "
        "a job)",
    )
    pdf_timeout_s: float = Field(20.0, gt=0, description="wall-clock limit to open a PDF or render one page")
    pdf_memory_bytes: int = Field(
        2 * 1024**3, gt=0, description="address space of each PDF rendering worker process (RLIMIT_AS)"
    )

    def reader_limits(self, *, job: bool = False) -> Limits:
        """The :class:`Limits` given to readers: jobs may hold more pages than synchronous requests."""
        return DEFAULT_LIMITS.replace(
            max_bytes=self.max_bytes,
            max_pixels=min(self.max_pixels, self.max_inflight_pixels),
            max_pages=self.job_max_pages if job else self.max_pages,
            max_frames=self.max_frames,
            pdf_timeout_s=self.pdf_timeout_s,
            pdf_memory_bytes=self.pdf_memory_bytes,
        )


class BatchSettings(_Group):
    """Dynamic batching: concurrent requests are merged into one model call."""

    max_size: int = Field(16, gt=0, description="most pages in one model batch")
    max_wait_ms: float = Field(5.0, ge=0, description="longest wait for more requests once one is queued")
    max_queue: int = Field(
        256, gt=0, description="most queued pages (decoded, in memory) before requests are refused with 503"
    )


class ModelSettings(_Group):
    """Which models the service builds at start-up (once, shared by every request, job and the UI)."""

    det_arch: str | None = Field(None, description="detection architecture (registry name); None: default")
    reco_arch: str | None = Field(None, description="recognition architecture; None: default")
    det_weights: str = Field("default", description='"default" (shipped), "random" or a safetensors path')
    reco_weights: str = Field("default", description='"default" (shipped), "random" or a safetensors path')
    det_input_shapes: list[tuple[int, int]] | None = Field(
        None, description="static (height, width) inputs of the detector; None: its defaults (1024 px)"
    )
    device: str | None = Field(None, description="torch device; None picks CUDA when present")
    torch_threads: int | None = Field(
        None,
        gt=0,
        description="intra-op CPU threads for the whole process; None: torch's default (one per core)",
    )
    replicas: int | None = Field(
        None,
        gt=0,
        description="processes that each hold both models and read a share of the model batches "
        "(OCROptions.replicas: on a GPU, host work spreads over that many cores; each costs the models' "
        f"memory again); None: {SERVICE_GPU_REPLICAS} on a CUDA device (fewer where its memory or the "
        "cores hold fewer), 1 elsewhere",
    )
    model_server: bool = Field(
        False,
        description="the replicas' models in one model server process on the device (OCROptions.model_server, "
        "vision.predictors.remote) instead of one copy each",
    )
    sparse_words: int | None = Field(
        None,
        ge=0,
        description="pages with fewer readings drop lone symbols and single characters (OCROptions.sparse; "
        "80 for photos and screens; None or 0: every reading kept)",
    )
    show_through: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="drop words fainter than this share of the page's darkest text: the next sheet or the back "
        "of thin paper showing through (OCROptions.show_through; None: 0.25; 0 keeps every word)",
    )
    photo: Literal["auto", "on", "off"] | None = Field(
        None,
        description="the page-versus-photo gate (OCROptions.photo): auto tells photos from documents and "
        "reads photos with the photo detector and the sparse rule; on: every page is a photo; off: none; "
        "None: auto",
    )
    sam_checkpoint: Path | None = Field(
        None, description="SAM checkpoint; enables POST /v1/segment and the UI tab"
    )
    sam_model_type: str = Field("vit_b", description="SAM image encoder size: vit_b, vit_l or vit_h")

    def ocr_options(self) -> OCROptions:
        """These settings as the OCR product's options type."""
        from vision.pipelines.ocr.options import options_from_args
        from vision.pipelines.ocr.replicas import device_replicas

        replicas = self.replicas or device_replicas(self.device, SERVICE_GPU_REPLICAS)
        return options_from_args(self, det_input_shapes=self.det_input_shapes, replicas=replicas)


class JobSettings(_Group):
    """Asynchronous jobs: where they persist and how they run."""

    dir: Path = Field(Path("vision-jobs"), description="SQLite database and job files")
    workers: int = Field(1, gt=0, le=16, description="jobs run at the same time per server process")
    chunk_pages: int = Field(4, gt=0, description="pages OCR'd between two progress checkpoints")
    max_attempts: int = Field(
        3, gt=0, description="starts allowed before an interrupted job is marked failed"
    )
    video_fps: float = Field(1.0, gt=0, description="frames sampled per second of video")
    stale_after_s: float = Field(
        30.0, gt=0, description="a running job whose owner is silent this long is resumed"
    )
    max_active: int = Field(100, gt=0, description="most queued and running jobs; more are refused with 429")
    max_stored_bytes: int = Field(
        10 * 1024**3, gt=0, description="most bytes of job inputs kept on disk; more are refused with 507"
    )
    retention_s: float = Field(
        7 * 24 * 3600.0, gt=0, description="finished jobs (and their files) are deleted after this long"
    )


class ServiceSettings(BaseSettings):
    """Everything the REST service and the UI read at start-up."""

    model_config = SettingsConfigDict(
        env_prefix="VISION_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    config_file: Path | None = Field(None, description=f"TOML or JSON settings file (env {_CONFIG_ENV})")
    api_key: SecretStr | None = Field(None, description="when set, /v1/* require this X-API-Key header")
    ui: bool = Field(True, description="mount the Gradio UI at /ui")
    metrics_open: bool = Field(False, description="serve /metrics without the API key")
    allowed_hosts: list[str] | None = Field(
        None,
        description="Host headers accepted; None: localhost names only when no API key is set, any otherwise",
    )
    allowed_origins: list[str] = Field(
        [], description="browser Origins allowed to call /v1/* (besides the server's own); '*' for any"
    )
    read_timeout_s: float = Field(30.0, gt=0, description="longest wait for the next piece of a request body")
    max_connections: int = Field(512, gt=0, description="open connections per server process")
    worker_nice: int = Field(
        10,
        ge=0,
        le=19,
        description="niceness added to the threads and processes doing OCR work (batcher, request threads, "
        "job workers, PDF workers), so the event loop answering /healthz runs first on a busy CPU; 0: off",
    )
    switch_interval_ms: float = Field(
        0.5,
        gt=0,
        le=100,
        description="the interpreter's thread switch interval in `vision serve` (Python's default is 5 ms): "
        "how long the event loop may wait for the GIL while OCR threads hold it",
    )
    limits: LimitSettings = LimitSettings()
    batching: BatchSettings = BatchSettings()
    models: ModelSettings = ModelSettings()
    jobs: JobSettings = JobSettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Init kwargs, then ``VISION_*`` variables, then the config file (if one is named)."""
        path = _config_path(init_settings)
        if path is None:
            return init_settings, env_settings
        return init_settings, env_settings, _file_source(settings_cls, path)


def _config_path(init_settings: PydanticBaseSettingsSource) -> Path | None:
    kwargs: dict[str, Any] = (
        init_settings.init_kwargs if isinstance(init_settings, InitSettingsSource) else {}
    )
    raw = kwargs.get("config_file") or os.environ.get(_CONFIG_ENV)
    return Path(raw) if raw else None


def _file_source(settings_cls: type[BaseSettings], path: Path) -> PydanticBaseSettingsSource:
    if not path.is_file():
        raise FileNotFoundError(f"settings file not found: {path}")
    if path.suffix.lower() == ".json":
        return JsonConfigSettingsSource(settings_cls, json_file=path)
    if path.suffix.lower() == ".toml":
        return TomlConfigSettingsSource(settings_cls, toml_file=path)
    raise ValueError(f"settings file must be .toml or .json: {path}")
