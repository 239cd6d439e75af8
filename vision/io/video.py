"""Video reader: frames sampled by time with torchcodec, decoded a few at a time (never the whole video)."""

from __future__ import annotations

import math
import os
from typing import Any, Iterator

from vision.errors import CorruptFile, LimitExceeded, UnsupportedFormat, VisionError
from vision.io._source import FileSource, check_path, read_bytes, read_head, source_name
from vision.io.document import DocumentFile
from vision.io.page import PageImage
from vision.io.sniff import describe_unsupported, kind_of, sniff_format
from vision.settings import Limits

__all__ = ["VideoFile"]

CHUNK_BYTES = (
    64 * 1024**2
)  # decoded frames held at once: 8 frames of 1080p RGB (~6 MB each) or fewer larger ones
MAX_CHUNK = 8


def _resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} requested but CUDA is not available")
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError(f"device must be 'cpu', 'cuda[:N]' or 'auto', got {device!r}")
    return device


def _check_args(fps: float | None, start: float | None, end: float | None, max_frames: int | None) -> None:
    for label, value in (("fps", fps), ("start", start), ("end", end)):
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value)):
            raise ValueError(f"{label} must be a finite number, got {value!r}")
    if fps is not None and fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    if start is not None and start < 0:
        raise ValueError(f"start must be >= 0, got {start}")
    if start is not None and end is not None and end <= start:
        raise ValueError(f"end ({end}) must be after start ({start})")
    if max_frames is not None and (not isinstance(max_frames, int) or max_frames <= 0):
        raise ValueError(f"max_frames must be a positive int, got {max_frames!r}")


def _open_decoder(data: Any, name: str, fmt: str | None, devices: list[str]) -> tuple[Any, str]:
    """Probe the container, then open its best video stream on the first device that works.

    Returns the decoder and its device; failures become VisionErrors (or RuntimeError for a GPU that
    cannot decode).
    """
    from torchcodec.decoders import VideoDecoder

    try:
        from torchcodec.decoders import get_container_metadata
    except ImportError:  # torchcodec < 0.12 has no container probe: the decoder's own error decides below
        get_container_metadata = None
    if get_container_metadata is not None:
        try:
            container = get_container_metadata(data)
        except Exception as exc:  # torchcodec raises RuntimeError/ValueError with FFmpeg's message
            cls = CorruptFile if fmt else UnsupportedFormat
            reason = f"damaged {fmt} container" if fmt else "not a recognised video"
            raise cls(name, f"{reason} ({_first_line(exc)})") from None
        if container.best_video_stream_index is None:
            kinds = sorted({str(s.media_type) for s in container.streams}) or ["no streams"]
            raise UnsupportedFormat(name, f"no video stream in this file (found: {', '.join(kinds)})")
    for device in devices:
        try:
            return VideoDecoder(data, dimension_order="NHWC", device=device, seek_mode="exact"), device
        except Exception as exc:
            if device != devices[-1]:
                continue
            if device.startswith("cuda"):
                raise RuntimeError(f"{name}: torchcodec cannot decode on {device} ({exc})") from None
            cls = CorruptFile if fmt or get_container_metadata is not None else UnsupportedFormat
            raise cls(name, f"video stream cannot be decoded ({_first_line(exc)})") from None
    raise ValueError("no device to decode on")


def _first_line(exc: Exception) -> str:
    """FFmpeg/torchcodec messages start with a C++ source location; keep the tail of the first line."""
    return (str(exc).splitlines() or [type(exc).__name__])[0][-160:]


class VideoFile(DocumentFile):
    """Frames of a video (see :meth:`DocumentFile.from_video`)."""

    kind = "video"

    def __init__(
        self,
        source: FileSource,
        *,
        fps: float | None,
        start: float | None,
        end: float | None,
        max_frames: int | None,
        device: str,
        limits: Limits,
    ) -> None:
        name = source_name(source)
        super().__init__(name, limits)
        _check_args(fps, start, end, max_frames)
        resolved = _resolve_device(device)
        head, source = read_head(source, limits)
        fmt = sniff_format(head)
        if fmt is not None and kind_of(fmt) != "video":
            raise UnsupportedFormat(
                name,
                f"is a {fmt.upper()} file, not a video (use DocumentFile.from_path)"
                if kind_of(fmt)
                else describe_unsupported(fmt),
            )
        data = (
            check_path(source, limits)
            if isinstance(source, (str, os.PathLike))
            else read_bytes(source, limits)
        )
        devices = [resolved, "cpu"] if device == "auto" and resolved != "cpu" else [resolved]
        self._decoder, self.device = _open_decoder(data, name, fmt, devices)
        meta = self._decoder.metadata
        self.width, self.height = int(meta.width or 0), int(meta.height or 0)
        if self.width * self.height > limits.max_pixels:
            raise LimitExceeded(
                name,
                f"frames are {self.width}x{self.height}, over the limit of "
                f"{limits.max_pixels} pixels (max_pixels)",
            )
        self.fps = fps
        self._plan(meta, start, end, max_frames)

    def _plan(self, meta: Any, start: float | None, end: float | None, max_frames: int | None) -> None:
        """Decide which frames to return: timestamps (``fps`` given) or a range of frame indices."""
        num_frames = int(meta.num_frames or 0)
        begin = float(meta.begin_stream_seconds or 0.0)
        stop = float(meta.end_stream_seconds or 0.0)
        if num_frames <= 0 or stop <= begin:
            raise CorruptFile(self.source, "video stream has no decodable frames")
        self.start = max(begin, start if start is not None else begin)
        self.end = min(stop, end) if end is not None else stop
        if self.start >= self.end:
            raise ValueError(
                f"{self.source}: nothing to read from {start} to {end} s: "
                f"the video spans {begin:.3f} to {stop:.3f} s"
            )
        if self.fps is not None:
            span = (self.end - self.start) * self.fps  # may overflow to inf for absurd fps: capped below
            count = max(0, math.ceil(min(span, 1e15)))
            while count and self.start + (count - 1) / self.fps >= self.end:  # float guard at the boundary
                count -= 1
            self._first = 0
        else:
            searched = start is not None and self.start > begin
            self._first = self._first_index_at(self.start, num_frames) if searched else 0
            last = (
                self._first_index_at(self.end, num_frames)
                if end is not None and self.end < stop
                else num_frames
            )
            count = last - self._first
        if max_frames is not None:
            count = min(count, max_frames)
        if count <= 0 and start is None and end is None:
            raise CorruptFile(self.source, "video stream has no frames with usable timestamps")
        if count <= 0:
            raise ValueError(f"{self.source}: no frames between {self.start:.3f} s and {self.end:.3f} s")
        if count > self.limits.max_frames:
            raise LimitExceeded(
                self.source,
                f"{count} frames to sample, over the limit of {self.limits.max_frames} "
                "(max_frames; lower fps or pass max_frames=...)",
            )
        self._count = count
        self._stream = {
            "codec": meta.codec,
            "average_fps": meta.average_fps,
            "num_frames": num_frames,
            "duration": stop - begin,
        }

    def _first_index_at(self, seconds: float, num_frames: int) -> int:
        """Index of the first frame whose timestamp is >= ``seconds`` (binary search, log2(N) decodes)."""
        lo, hi = 0, num_frames
        while lo < hi:
            mid = (lo + hi) // 2
            if self._pts_of(mid) < seconds:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _pts_of(self, index: int) -> float:
        try:
            return float(self._decoder.get_frame_at(index).pts_seconds)
        except Exception as exc:
            raise CorruptFile(self.source, f"frame {index} cannot be decoded ({_first_line(exc)})") from None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[PageImage]:
        chunk = max(1, min(MAX_CHUNK, CHUNK_BYTES // max(1, self.width * self.height * 3)))
        for first in range(0, self._count, chunk):
            positions = range(first, min(first + chunk, self._count))
            batch = self._decode(positions)
            for position, frame, pts in zip(positions, batch.data, batch.pts_seconds.tolist(), strict=True):
                image = frame.cpu().numpy()  # (H, W, 3) uint8, NHWC order requested from the decoder
                yield PageImage(
                    image, self.source, position, (image.shape[0], image.shape[1]), timestamp=float(pts)
                )

    def _decode(self, positions: range) -> Any:
        """One small batch: frames shown at sampled times (fps mode) or consecutive frames."""
        if self._decoder is None:
            raise ValueError(f"{self.source}: video is closed")
        try:
            if self.fps is not None:
                return self._decoder.get_frames_played_at(
                    seconds=[self.start + p / self.fps for p in positions]
                )
            return self._decoder.get_frames_at(indices=[self._first + p for p in positions])
        except VisionError:
            raise
        except Exception as exc:
            where = (
                f"{self.start + positions[0] / self.fps:.3f} s"
                if self.fps
                else f"frame {self._first + positions[0]}"
            )
            raise CorruptFile(
                self.source, f"cannot decode frames from {where} ({_first_line(exc)})"
            ) from None

    def describe(self) -> dict[str, Any]:
        """Stream facts (codec, size, fps, duration, frame count) and the sampling plan."""
        return {
            "source": self.source,
            "kind": self.kind,
            "width": self.width,
            "height": self.height,
            **self._stream,
            "sample_fps": self.fps,
            "start": self.start,
            "end": self.end,
            "frames": self._count,
            "device": self.device,
        }

    def close(self) -> None:
        self._decoder = None
