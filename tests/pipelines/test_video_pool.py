"""Video OCR over several worker processes: same timelines as one process, broken videos reported, a
predictor that cannot be built raises."""

import functools
import os
import pickle

import numpy as np
import pytest
from _video_synth import CAPTIONS, Clip, TemplateOCR, encode_cfr, encode_vfr

from vision.errors import CorruptFile, VisionError
from vision.pipelines.video.pipeline import VideoOCR, VideoOptions
from vision.pipelines.video.pool import VideoProcessPool, _segments

VOCAB = [c.text for c in CAPTIONS]


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Clip]:
    folder = tmp_path_factory.mktemp("videos")
    return {"cfr": encode_cfr(folder / "cfr.mp4"), "vfr": encode_vfr(folder / "vfr.mkv")}


def _broken_factory() -> TemplateOCR:
    raise RuntimeError("no weights here")


def _crashing_predictor(frames: list) -> None:
    os._exit(3)  # a native crash in the middle of a video


def _crashing_factory():
    return _crashing_predictor


def test_pool_matches_one_process_and_reports_broken_videos(clips: dict[str, Clip], tmp_path) -> None:
    (tmp_path / "text.mp4").write_text("not a video\n" * 100)
    sources = [clips["cfr"].path, tmp_path / "text.mp4", clips["vfr"].path, clips["vfr"].path]
    config = VideoOptions(fps=2.0, batch_size=4)
    with VideoProcessPool(functools.partial(TemplateOCR, VOCAB), config, processes=2, threads=1) as pool:
        listed = list(pool.run(sources))
    results = {r.source: r for r in listed}
    assert len(listed) == 4 and set(results) == {str(s) for s in sources}  # a video named twice is read twice
    broken = results[str(tmp_path / "text.mp4")]
    assert isinstance(broken.error, VisionError) and broken.document is None
    for clip in clips.values():
        got = results[str(clip.path)]
        alone = VideoOCR(TemplateOCR(VOCAB), config)(clip.path)
        assert got.ok and got.frames == len(alone.pages) > 0
        assert got.document.timeline == alone.timeline and all(p.image is None for p in got.document.pages)


@pytest.mark.parametrize("kind", ["cfr", "vfr"])
def test_one_video_cut_into_segments_gives_the_one_process_result(clips: dict[str, Clip], kind: str) -> None:
    """Fewer videos than workers: the video is read as consecutive time segments by several workers and
    merged once; frames, their timestamps and indices, and the timeline equal a single process's."""
    clip = clips[kind]
    config = VideoOptions(fps=2.0, batch_size=4)
    segments = _segments(str(clip.path), config, 3)
    assert len(segments) == 3 and segments[0][0] == 0.0 and segments[-1][1] is None
    with VideoProcessPool(functools.partial(TemplateOCR, VOCAB), config, processes=3, threads=1) as pool:
        (got,) = pool.run([clip.path])
    alone = VideoOCR(TemplateOCR(VOCAB), config)(clip.path)
    assert got.ok and got.frames == len(alone.pages)
    assert [(p.timestamp, p.page_idx) for p in got.document.pages] == [(p.timestamp, p.page_idx) for p in alone.pages]
    assert got.document.timeline == alone.timeline
    assert _segments(str(clip.path), VideoOptions(fps=2.0, scene_change=True), 3) == [(None, None)]


def test_errors_survive_pickling() -> None:
    """Reader errors cross the process boundary with their type, source and reason."""
    err = pickle.loads(pickle.dumps(CorruptFile("a.mp4", "truncated")))
    assert type(err) is CorruptFile and (err.source, err.reason, str(err)) == ("a.mp4", "truncated", "a.mp4: truncated")


def test_pool_raises_when_the_predictor_cannot_be_built_or_a_worker_dies(clips: dict[str, Clip]) -> None:
    with VideoProcessPool(_broken_factory, processes=1, threads=1) as pool, \
            pytest.raises(RuntimeError, match="no weights here"):
        list(pool.run([clips["cfr"].path]))
    with VideoProcessPool(_crashing_factory, processes=1, threads=1) as pool, \
            pytest.raises(RuntimeError, match="worker process died; unfinished: .*cfr.mp4"):
        list(pool.run([clips["cfr"].path]))
    with pytest.raises(ValueError, match="processes"):
        VideoProcessPool(_broken_factory, processes=0)


def test_warmed_ocr_predictor_warms_up_on_blank_frames() -> None:
    """The factory the CLI and benchmark hand to workers: a real OCR predictor, already run once."""
    from vision.io.page import PageImage
    from vision.pipelines.video.pool import warmed_ocr_predictor

    predictor = warmed_ocr_predictor(warmup_size=(64, 96), det_weights=None, reco_weights=None, device="cpu")
    frame = PageImage(np.full((64, 96, 3), 255, np.uint8), "<frame>", 0, (64, 96), timestamp=0.0)
    (page,) = predictor([frame]).pages
    assert page.dimensions == (64, 96)
