"""Video OCR: sampled frames of many videos, batched through one OCR predictor, merged into timelines.

Data flow (``workers`` decoder threads, one consumer)::

    videos --> decoder threads --(bounded queue of frames)--> batches of ``batch_size`` frames, mixed across
               (torchcodec,      ``queue_size`` frames at       videos --> OCR predictor --> per-video pages
               sampling rule)    most in flight                 --> timeline merge --> Document per video

Decoding overlaps the models because torchcodec and FFmpeg release the GIL while decoding, as torch does
while running the models; the queue bound keeps memory flat (never a whole video in memory: at most
``queue_size + batch_size`` frames plus what each decoder thread holds, its reader's decode chunk, are
alive, and OCR pages drop their image unless asked). Sampling: :mod:`vision.pipelines.video.sampling`.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from vision.errors import VisionError
from vision.io.page import PageImage
from vision.pipelines.video.timeline import TimelineOptions, video_document
from vision.pipelines.video.sampling import FrameSampler, Reader, SceneChange
from vision.settings import DEFAULT_LIMITS, Limits
from vision.structures import Document

__all__ = [
    "VideoOptions",
    "SceneChange",
    "FrameSampler",
    "VideoResult",
    "VideoProgress",
    "VideoOCR",
    "describe_error",
]

Predictor = Callable[[list[PageImage]], Document]


@dataclass(frozen=True)
class VideoOptions:
    """How videos are sampled, batched and merged.

    Attributes:
        fps: frames read per second of video (the probe rate in scene-change mode).
        scene_change: OCR only probed frames that differ from the last OCR'd one.
        scene_threshold: grey levels (of 255) a :class:`SceneChange` cell must change by.
        scene_min_cells: changed cells that make a scene change.
        start: first second to read (``None``: the beginning).
        end: last second to read (``None``: the end).
        batch_size: frames per predictor call (frames of several videos share a batch).
        workers: videos decoded at the same time (threads).
        queue_size: decoded frames waiting for the models, at most.
        decode_device: where torchcodec decodes (``"cpu"`` or ``"cuda"``).
        limits: input limits (bytes, pixels, frames) for the reader.
        keep_images: keep each frame's image on its OCR page (memory grows with the video).
        timeline: the temporal merge rules.
    """

    fps: float = 1.0
    scene_change: bool = False
    scene_threshold: float = 16.0
    scene_min_cells: int = 2
    start: float | None = None
    end: float | None = None
    batch_size: int = 16
    workers: int = 2
    queue_size: int = 32
    decode_device: str = "cpu"
    limits: Limits = DEFAULT_LIMITS
    keep_images: bool = False
    timeline: TimelineOptions = field(default_factory=TimelineOptions)

    def __post_init__(self) -> None:
        if not self.fps > 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if min(self.batch_size, self.workers, self.queue_size, self.scene_min_cells) < 1:
            raise ValueError("batch_size, workers, queue_size and scene_min_cells must be >= 1")

    @property
    def interval(self) -> float:
        """Seconds between probed frames."""
        return 1.0 / self.fps

    def sampler(self, source: str, reader: Reader | None = None) -> FrameSampler:
        """The :class:`FrameSampler` of one video under these settings."""
        scene = SceneChange(self.scene_threshold, self.scene_min_cells) if self.scene_change else None
        return FrameSampler(
            source,
            fps=self.fps,
            start=self.start,
            end=self.end,
            device=self.decode_device,
            limits=self.limits,
            scene=scene,
            reader=reader,
        )


def describe_error(source: str, exc: BaseException) -> str:
    """A one-line message naming the video (a VisionError's message already does)."""
    return str(exc) if isinstance(exc, VisionError) else f"{source}: {type(exc).__name__}: {exc}"


@dataclass
class VideoResult:
    """One video's outcome: its document (``None`` where an engine wrote it elsewhere), or its error."""

    source: str
    document: Document | None
    error: Exception | None = None
    frames: int = 0
    end: float | None = None  # where the last sample stops standing (see FrameSampler.end)
    samples: int | None = None  # frames probed (with scene change: more than OCR'd)

    @property
    def ok(self) -> bool:
        """Whether the video was read and processed."""
        return self.error is None

    @property
    def message(self) -> str:
        """The error as one line naming the video (empty when ``ok``)."""
        return "" if self.error is None else describe_error(self.source, self.error)


class VideoProgress(Protocol):
    """Receives progress while :meth:`VideoOCR.run` works (called from the consumer thread)."""

    def started(self, source: str, expected_frames: int | None) -> None: ...

    def advanced(self, source: str, frames: int) -> None: ...


@dataclass
class _State:
    source: str
    pages: list[Any] = field(default_factory=list)
    queued: int = 0
    decoded: bool = False
    end: float | None = None
    samples: int | None = None
    error: Exception | None = None


class VideoOCR:
    """OCR of whole videos with a predictor ``list[PageImage] -> Document`` (e.g. ``vision.ocr_predictor()``).

    Args:
        predictor: called on batches of frames; must return one page per frame, in order.
        config: sampling, batching and merge settings.
        reader: ``reader(source, fps=, start=, end=, device=, limits=) -> Iterable[PageImage]``; default
            :meth:`vision.io.DocumentFile.from_video`.
    """

    def __init__(
        self, predictor: Predictor, config: VideoOptions = VideoOptions(), *, reader: Reader | None = None
    ) -> None:
        self.predictor, self.config, self.reader = predictor, config, reader

    def __call__(self, source: str | os.PathLike) -> Document:
        """The document of one video (raises the reader's :class:`~vision.errors.VisionError` on failure)."""
        (result,) = list(self.run([source]))
        if result.error is not None:
            raise result.error
        assert result.document is not None
        return result.document

    def run(
        self, sources: Iterable[str | os.PathLike], *, progress: VideoProgress | None = None
    ) -> Iterator[VideoResult]:
        """Process ``sources``, yielding one :class:`VideoResult` per video as each completes.

        A video that fails to decode yields a result with ``error`` set; the others go on. Errors raised by
        the predictor propagate (they are not a property of one video).
        """
        names = [os.fspath(s) for s in sources]
        if not names:
            return
        cfg = self.config
        channel: queue.Queue[tuple[str, int, Any]] = queue.Queue(maxsize=cfg.queue_size)
        stop = threading.Event()
        todo = iter(list(enumerate(names)))
        lock = threading.Lock()
        threads = [
            threading.Thread(
                target=self._decode,
                args=(todo, lock, channel, stop),
                daemon=True,
                name=f"vision-video-decode-{i}",
            )
            for i in range(min(cfg.workers, len(names)))
        ]
        for thread in threads:
            thread.start()
        try:
            yield from self._consume(channel, names, len(threads), progress)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=10)

    def _decode(
        self,
        todo: Iterator[tuple[int, str]],
        lock: threading.Lock,
        channel: queue.Queue,
        stop: threading.Event,
    ) -> None:
        """Decoder thread: take the next video, stream its sampled frames into ``channel``."""

        def put(item: tuple[str, int, Any]) -> bool:
            while not stop.is_set():
                try:
                    channel.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            while not stop.is_set():
                with lock:
                    job = next(todo, None)
                if job is None:
                    return
                sid, source = job
                sampler = self.config.sampler(source, self.reader)
                try:
                    if not put(("start", sid, sampler.open())):
                        return
                    for frame in sampler:
                        if not put(("frame", sid, frame)):
                            return
                except Exception as exc:  # a broken video is reported as its result, never stops the others
                    put(("error", sid, exc))
                    continue
                put(("end", sid, (sampler.end, sampler.probed)))
        finally:
            put(("done", -1, None))

    def _consume(
        self, channel: queue.Queue, names: list[str], workers: int, progress: VideoProgress | None
    ) -> Iterator[VideoResult]:
        states: dict[int, _State] = {}
        pending: list[tuple[int, PageImage]] = []
        running = workers
        while running or pending or states:
            if running:
                kind, sid, payload = channel.get()
                if kind == "done":
                    running -= 1
                elif kind == "start":
                    states[sid] = _State(names[sid])
                    if progress is not None:
                        progress.started(names[sid], payload)
                elif kind == "frame":
                    pending.append((sid, payload))
                    states[sid].queued += 1
                elif kind == "error":
                    states.setdefault(sid, _State(names[sid]))
                    states[sid].error, states[sid].decoded = payload, True
                    dropped = [item for item in pending if item[0] == sid]
                    pending = [item for item in pending if item[0] != sid]
                    states[sid].queued -= len(dropped)
                else:  # "end"
                    (states[sid].end, states[sid].samples), states[sid].decoded = payload, True
            while len(pending) >= self.config.batch_size or (pending and not running):
                batch, pending = pending[: self.config.batch_size], pending[self.config.batch_size :]
                self._ocr(batch, states, progress)
            for sid in [s for s, st in states.items() if st.decoded and st.queued == 0]:
                yield self._finish(states.pop(sid))
            if not running and not pending and states:  # a decoder vanished without a word: never hang
                for sid in list(states):
                    st = states.pop(sid)
                    st.error = st.error or RuntimeError(f"{st.source}: decoder stopped early")
                    yield self._finish(st)

    def _ocr(
        self, batch: list[tuple[int, PageImage]], states: dict[int, _State], progress: VideoProgress | None
    ) -> None:
        doc = self.predictor([frame for _, frame in batch])
        if len(doc.pages) != len(batch):
            raise RuntimeError(f"the predictor returned {len(doc.pages)} pages for {len(batch)} frames")
        counts: dict[int, int] = {}
        for (sid, frame), page in zip(batch, doc.pages):
            page.timestamp = frame.timestamp
            page.page_idx = frame.index
            page.source = frame.source
            if not self.config.keep_images:
                page.image = None
            states[sid].pages.append(page)
            states[sid].queued -= 1
            counts[sid] = counts.get(sid, 0) + 1
        if progress is not None:
            for sid, n in counts.items():
                progress.advanced(states[sid].source, n)

    def _finish(self, state: _State) -> VideoResult:
        if state.error is not None:
            return VideoResult(state.source, None, state.error, len(state.pages))
        doc = video_document(
            state.pages,
            source=state.source,
            end=state.end,
            samples=state.samples,
            interval=self.config.interval,
            config=self.config.timeline,
        )
        return VideoResult(state.source, doc, None, len(state.pages), state.end, state.samples)
