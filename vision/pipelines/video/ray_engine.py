"""``vision video --engine ray``: the video job as a Ray Data pipeline, for corpora beyond one machine.

::

    from_items(videos)                         one row per video (path + output stem)
      -> flat_map(decode)                      tasks, 1 CPU each: the sampled frames (same FrameSampler as
                                               the local engine) as rows, then one "end" or "error" row
      -> map_batches(OCR actors)               ActorPoolStrategy(size=workers); 1 GPU per actor when the
                                               cluster has GPUs, else 1 CPU; each actor builds its predictor
      -> iter_rows() on the driver             pages of each video gathered as they stream in; when a video's
                                               "end" row and all its frames have arrived: timeline merge and
                                               atomic writes (vision.pipelines.video.outputs)

Writing on the driver keeps the pipeline streaming (no all-to-all group-by barrier, so results and progress
arrive per video) and means only the *inputs* must be readable by every node (a shared filesystem or the
same mount everywhere); the outputs land where the command runs. Frames leave the object store right after
OCR: what reaches the driver is the JSON of each frame's page (no image).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vision.errors import VisionError
from vision.io.page import PageImage
from vision.pipelines._ray_rows import complete_groups
from vision.pipelines.video.timeline import video_document
from vision.pipelines.video.pipeline import VideoOptions, VideoResult, describe_error
from vision.pipelines.video.outputs import write_outputs
from vision.structures import Document

__all__ = ["run_ray", "decode_rows", "OCRActor"]

_NO_IMAGE = np.zeros((1, 1, 3), dtype=np.uint8)


def _row(
    path: str,
    kind: str,
    *,
    index: int = -1,
    timestamp: float = -1.0,
    image: np.ndarray = _NO_IMAGE,
    end: float = -1.0,
    samples: int = 0,
    frames: int = 0,
    message: str = "",
) -> dict[str, Any]:
    """Every row has the same columns (Arrow needs one schema); ``kind`` says which ones matter."""
    return {
        "path": path,
        "kind": kind,
        "index": index,
        "timestamp": timestamp,
        "image": image,
        "end": end,
        "samples": samples,
        "frames": frames,
        "message": message,
    }


def decode_rows(row: dict[str, Any], config: VideoOptions) -> Iterator[dict[str, Any]]:
    """Ray ``flat_map`` body: one video's sampled frames, then an ``end`` row (or an ``error`` row)."""
    path = str(row["path"])
    sampler = config.sampler(path)
    count = 0
    try:
        for frame in sampler:
            count += 1
            yield _row(
                path, "frame", index=frame.index, timestamp=float(frame.timestamp or 0.0), image=frame.image
            )
    except Exception as exc:  # a broken video becomes a row the driver reports; the others go on
        yield _row(path, "error", message=describe_error(path, exc))
        return
    end = -1.0 if sampler.end is None else sampler.end
    yield _row(path, "end", end=end, samples=sampler.probed, frames=count)


class OCRActor:
    """Ray actor: builds the predictor once, then OCRs the frame rows of each batch (other rows pass)."""

    def __init__(self, factory: Callable[[], Callable[[list[PageImage]], Document]]) -> None:
        self.predictor = factory()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        kinds = [str(k) for k in batch["kind"]]
        rows = [i for i, kind in enumerate(kinds) if kind == "frame"]
        frames = []
        for i in rows:
            image = np.ascontiguousarray(batch["image"][i])
            frames.append(
                PageImage(
                    image,
                    str(batch["path"][i]),
                    int(batch["index"][i]),
                    (image.shape[0], image.shape[1]),
                    timestamp=float(batch["timestamp"][i]),
                )
            )
        pages = self.predictor(frames).pages if frames else []
        if len(pages) != len(frames):
            raise RuntimeError(f"the predictor returned {len(pages)} pages for {len(frames)} frames")
        out = np.full(len(kinds), "", dtype=object)
        for i, frame, page in zip(rows, frames, pages):
            page.image = None  # the frame stays here; only its OCR travels on
            page.timestamp, page.page_idx, page.source = frame.timestamp, frame.index, frame.source
            out[i] = Document(pages=[page]).to_json()
        kept = {k: v for k, v in batch.items() if k != "image"}
        return {**kept, "page": out}


def _resources(ray: Any) -> dict[str, float]:
    return {"num_gpus": 1.0} if ray.cluster_resources().get("GPU", 0) >= 1 else {"num_cpus": 1.0}


def run_ray(
    jobs: Sequence[tuple[str, str]],
    factory: Callable[[], Callable],
    config: VideoOptions,
    formats: Sequence[str],
    *,
    address: str | None = None,
    workers: int = 2,
    progress: bool = True,
    init_kwargs: dict[str, Any] | None = None,
) -> Iterator[VideoResult]:
    """Run the video job on Ray; yields one :class:`VideoResult` per video as it is written.

    Args:
        jobs: ``(video path, output stem)`` pairs.
        factory: picklable zero-argument callable building the predictor in each actor.
        config: sampling and merge settings (``batch_size`` = frames per actor call).
        formats: output formats (see :data:`vision.pipelines.video.outputs.FORMATS`).
        address: cluster to join when Ray is not initialised yet (``None``: ``RAY_ADDRESS`` or a local one).
        workers: OCR actors in the pool.
        progress: show Ray Data's progress bars (one per stage).
        init_kwargs: more ``ray.init`` arguments (e.g. ``num_cpus`` for a local instance).

    Results carry no document (it was written to disk); failures carry the error.
    """
    import ray
    import ray.data

    if not jobs:
        return
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, **(init_kwargs or {}))
    try:
        ray.data.DataContext.get_current().enable_progress_bars = progress
        stems = {str(path): Path(stem) for path, stem in jobs}
        ds = ray.data.from_items([{"path": path} for path in stems], override_num_blocks=len(stems))
        ds = ds.flat_map(decode_rows, fn_kwargs={"config": config}, num_cpus=1)
        ds = ds.map_batches(
            OCRActor,
            fn_constructor_kwargs={"factory": factory},
            batch_size=config.batch_size,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=workers),
            **_resources(ray),
        )
        yield from _gather(ds.iter_rows(), stems, config, formats)
    finally:
        if started:
            ray.shutdown()


def _gather(
    rows: Any, stems: dict[str, Path], config: VideoOptions, formats: Sequence[str]
) -> Iterator[VideoResult]:
    """Collect each video's pages from the OCR'd rows; merge and write a video once all of it has arrived."""
    closed: set[str] = set()
    for path, parts, end in complete_groups(rows, key=lambda row: str(row["path"]), part="frame", count="frames"):
        closed.add(path)
        if parts is None:
            yield VideoResult(path, None, VisionError(None, str(end["message"])))
            continue
        frames = [Document.from_json(r["page"]).pages[0] for r in parts]
        yield _write(path, frames, end, stems[path], config, formats)
    for path in set(stems) - closed:  # only when Ray lost rows: never report success for a partial video
        yield VideoResult(path, None, VisionError(path, "the Ray pipeline ended before all frames arrived"))


def _write(
    path: str,
    frames: list[Any],
    end: dict[str, Any],
    stem: Path,
    config: VideoOptions,
    formats: Sequence[str],
) -> VideoResult:
    end_time = float(end["end"])
    doc = video_document(
        frames,
        source=path,
        end=end_time if end_time >= 0 else None,
        samples=int(end["samples"]) or None,
        interval=config.interval,
        config=config.merge_rules,
    )
    try:
        write_outputs(doc, stem, formats)
    except OSError as exc:
        return VideoResult(path, None, VisionError(path, f"cannot write outputs ({exc})"), len(frames))
    return VideoResult(path, None, None, len(frames))
