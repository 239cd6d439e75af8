"""Which frames of a video reach the OCR: sampled by time, optionally kept only on scene change.

Frames are read at ``fps`` per second by the reader (default :meth:`vision.io.DocumentFile.from_video`,
streamed by torchcodec). With a :class:`SceneChange` rule that rate is the *probe* rate and a probed frame
is kept only when it differs from the last kept one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import cv2
import numpy as np

from vision.io.page import PageImage
from vision.settings import DEFAULT_LIMITS, Limits

__all__ = ["SceneChange", "FrameSampler", "Reader"]

Reader = Callable[..., Iterable[PageImage]]


class SceneChange:
    """The cheap scene-change rule: keep a frame when it visibly differs from the last kept frame.

    Both frames are shrunk by area averaging to a grid ``grid`` cells wide (64: a cell is 20 px of a 1280-px
    frame, about the height of a caption letter) and turned grey. A frame is a change when at least
    ``min_cells`` cells moved by more than ``threshold`` grey levels. Averaging over a cell removes
    compression noise (well under 16 levels on static footage) while a word appearing or vanishing moves its
    cells by tens of levels. The first frame is always kept; comparing to the last *kept* frame (not the
    previous one) lets slow fades add up to a change.
    """

    def __init__(self, threshold: float = 16.0, min_cells: int = 2, grid: int = 64) -> None:
        self.threshold, self.min_cells, self.grid = threshold, min_cells, grid
        self._last: np.ndarray | None = None

    def _thumb(self, image: np.ndarray) -> np.ndarray:
        h, w = image.shape[:2]
        size = (min(self.grid, w), max(1, round(min(self.grid, w) * h / w)))
        small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        return cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.int16)

    def __call__(self, image: np.ndarray) -> bool:
        """Whether ``image`` (RGB ``H x W x 3`` uint8) starts a new scene; it becomes the reference if so."""
        thumb = self._thumb(image)
        if self._last is not None and self._last.shape == thumb.shape:
            changed = int(np.count_nonzero(np.abs(thumb - self._last) > self.threshold))
            if changed < self.min_cells:
                return False
        self._last = thumb
        return True


def _default_reader(source: str, **kwargs: Any) -> Iterable[PageImage]:
    """``DocumentFile.from_video`` (imported late: torchcodec loads FFmpeg)."""
    from vision.io import DocumentFile

    return DocumentFile.from_video(source, **kwargs)


class FrameSampler:
    """The frames of one video that reach the OCR, streamed.

    Args:
        source: the video file.
        fps: probe rate; ``start``/``end``: the range read, in seconds (``None``: the whole stream).
        device, limits: passed to the reader (decoding device, input limits).
        scene: a :class:`SceneChange` rule (``None``: every probed frame is kept).
        reader: ``reader(source, fps=, start=, end=, device=, limits=) -> Iterable[PageImage]``.

    :meth:`open` opens the video (errors for broken files surface there or during iteration). Frames keep
    their position in the probe sequence as ``index`` (so scene-change sampling leaves holes). After
    iteration, :attr:`end` is the time the last probed frame stops standing for (the next sample time,
    cut at the end of the stream; ``None`` for a video without frames) and :attr:`probed` the number of
    frames decoded.
    """

    def __init__(
        self,
        source: str,
        *,
        fps: float,
        start: float | None = None,
        end: float | None = None,
        device: str = "cpu",
        limits: Limits = DEFAULT_LIMITS,
        scene: SceneChange | None = None,
        reader: Reader | None = None,
    ) -> None:
        self.source, self.fps, self.start, self.stop = source, fps, start, end  # self.end: see above
        self.device, self.limits, self.scene = device, limits, scene
        self.reader = reader or _default_reader
        self.end: float | None = None
        self.probed = 0
        self._frames: Iterable[PageImage] | None = None

    def open(self) -> int | None:
        """Open the video; returns how many frames will reach the OCR when that is known in advance."""
        self._frames = self.reader(
            self.source, fps=self.fps, start=self.start, end=self.stop, device=self.device, limits=self.limits
        )
        if self.scene is not None or not hasattr(self._frames, "__len__"):
            return None
        return len(self._frames)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[PageImage]:
        if self._frames is None:
            self.open()
        interval = 1.0 / self.fps
        last: float | None = None
        try:
            for frame in self._frames:  # type: ignore[union-attr]
                if frame.timestamp is None:
                    frame.timestamp = self.probed * interval
                frame.index = self.probed
                self.probed += 1
                last = float(frame.timestamp)
                if self.scene is None or self.scene(frame.image):
                    yield frame
        finally:
            close = getattr(self._frames, "close", None)
            if close is not None:
                close()
        if last is not None:  # the last sample stands until the next sample time, cut at the stream's end
            first = getattr(self._frames, "start", None)  # VideoFile: where sampling started, in seconds
            following = float(first) + self.probed * interval if _is_number(first) else last + interval
            self.end = max(last, following)
            stream_end = getattr(self._frames, "end", None)  # VideoFile: end of the stream (or of the range)
            if _is_number(stream_end) and stream_end > last:
                self.end = min(self.end, float(stream_end))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
