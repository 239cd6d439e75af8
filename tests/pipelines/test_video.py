"""Video OCR on generated videos (torchcodec- and ffmpeg-encoded, constant and variable frame rate).

The OCR here is the deterministic template recognizer (``_video_synth.TemplateOCR``), so these tests pin the
sampling, batching, threading and merge of the pipeline cheaply. Real OCR output goes through the same checks
in test_timeline.py (when the shipped weights exist) and test_video_real_ocr.py (always).
"""

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from _video_synth import (
    CAPTIONS,
    Clip,
    TemplateOCR,
    check_subtitles,
    check_timeline,
    draw_frame,
    encode_cfr,
    encode_vfr,
)

from vision.errors import LimitExceeded, VisionError
from vision.io.page import PageImage
from vision.pipelines.video.pipeline import SceneChange, VideoOCR, VideoOptions
from vision.settings import Limits
from vision.structures import Document, Page

VOCAB = [c.text for c in CAPTIONS]


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Clip]:
    folder = tmp_path_factory.mktemp("videos")
    return {"cfr": encode_cfr(folder / "cfr.mp4"), "vfr": encode_vfr(folder / "vfr.mkv")}


@pytest.fixture(scope="module")
def ocr() -> TemplateOCR:
    return TemplateOCR(VOCAB)


def test_the_vfr_fixture_really_has_a_variable_frame_rate(clips: dict[str, Clip]) -> None:
    steps = np.diff(clips["vfr"].starts)
    assert len(set(np.round(steps, 3))) >= 4 and steps.max() / steps.min() > 10


@pytest.mark.parametrize(
    ("kind", "fps", "scene"),
    [("cfr", 1.0, False), ("vfr", 1.0, False), ("vfr", 2.0, False), ("cfr", 4.0, True)],
)
def test_timeline_matches_what_the_video_shows(
    clips: dict[str, Clip], ocr: object, kind: str, fps: float, scene: bool
) -> None:
    clip = clips[kind]
    doc = VideoOCR(ocr, VideoOptions(fps=fps, scene_change=scene, batch_size=4))(clip.path)
    check_timeline(doc, clip, 1 / fps)
    check_subtitles(doc)
    times = [p.timestamp for p in doc.pages]
    assert times == sorted(times) and all(p.image is None for p in doc.pages)
    samples = int(np.ceil(clip.end * fps - 1e-9))
    if scene:
        assert 3 <= len(doc.pages) < samples / 2  # only frames where the picture changed reach the OCR
    else:
        assert [p.page_idx for p in doc.pages] == list(range(samples))


def test_frames_of_several_videos_share_batches(clips: dict[str, Clip]) -> None:
    ocr = TemplateOCR(VOCAB)
    pipeline = VideoOCR(ocr, VideoOptions(batch_size=8, workers=2, queue_size=4))
    results = {r.source: r for r in pipeline.run([clips["cfr"].path, clips["vfr"].path])}
    assert all(r.ok for r in results.values()) and len(results) == 2
    assert any(len(set(batch)) == 2 for batch in ocr.calls), ocr.calls
    assert all(len(batch) == 8 for batch in ocr.calls[:-1])
    for clip in clips.values():
        alone = VideoOCR(TemplateOCR(VOCAB))(clip.path)
        assert results[str(clip.path)].document.timeline == alone.timeline


def test_broken_videos_are_reported_and_the_others_go_on(clips: dict[str, Clip], tmp_path) -> None:
    data = clips["cfr"].path.read_bytes()
    (tmp_path / "truncated.mp4").write_bytes(data[: len(data) // 2])
    (tmp_path / "text.mp4").write_text("not a video\n" * 100)
    sources = [tmp_path / "truncated.mp4", clips["cfr"].path, tmp_path / "text.mp4", tmp_path / "missing.mkv"]
    results = {r.source: r for r in VideoOCR(TemplateOCR(VOCAB), VideoOptions(workers=2)).run(sources)}
    assert set(results) == {str(s) for s in sources}
    assert results[str(clips["cfr"].path)].ok
    for source in sources[0], sources[2], sources[3]:
        result = results[str(source)]
        assert isinstance(result.error, VisionError) and result.document is None
        assert result.message.startswith(str(source))
    with pytest.raises(VisionError):
        VideoOCR(TemplateOCR(VOCAB))(tmp_path / "text.mp4")


def test_limits_reach_the_reader(clips: dict[str, Clip]) -> None:
    config = VideoOptions(fps=1.0, limits=Limits(max_frames=3))
    with pytest.raises(LimitExceeded):
        VideoOCR(TemplateOCR(VOCAB), config)(clips["cfr"].path)


class _Recorder:
    """A reader of tiny synthetic frames and a slow predictor that log when frames are made and consumed."""

    def __init__(self, frames: int) -> None:
        self.frames, self.made, self.used = frames, 0, 0
        self.lock = threading.Lock()
        self.in_flight: list[int] = []
        self.made_during_ocr = 0
        self.busy = False

    def reader(self, source: str, **kwargs: object) -> Iterator[PageImage]:
        for i in range(self.frames):
            with self.lock:
                self.made += 1
                self.made_during_ocr += self.busy
            yield PageImage(np.zeros((8, 8, 3), np.uint8), source, i, (8, 8), timestamp=float(i))

    def predictor(self, pages: list[PageImage]) -> Document:
        with self.lock:
            self.busy = True
            self.in_flight.append(self.made - self.used)
        time.sleep(0.005)  # stands for the models' time on the batch
        with self.lock:
            self.busy, self.used = False, self.used + len(pages)
        return Document(pages=[Page(page_idx=p.index, dimensions=(8, 8)) for p in pages])


def test_decoding_overlaps_the_models_within_a_bounded_queue() -> None:
    rec = _Recorder(frames=120)
    config = VideoOptions(batch_size=4, workers=2, queue_size=6)
    results = list(VideoOCR(rec.predictor, config, reader=rec.reader).run(["a", "b"]))
    assert [len(r.document.pages) for r in results] == [120, 120]
    bound = config.queue_size + config.batch_size + config.workers * 2  # each decoder holds one frame at most
    assert max(rec.in_flight) <= bound, max(rec.in_flight)
    assert rec.made_during_ocr > 0  # decoders kept producing while the predictor ran


def test_scene_change_rule() -> None:
    rng = np.random.default_rng(0)
    blank = draw_frame([])
    noisy = np.clip(blank.astype(int) + rng.integers(-6, 7, blank.shape), 0, 255).astype(np.uint8)
    worded = draw_frame([CAPTIONS[0]])
    rule = SceneChange()
    assert rule(blank) and not rule(noisy) and not rule(blank)
    assert rule(worded) and not rule(worded.copy()) and rule(blank)
    fade = SceneChange()
    steps = [fade(np.clip(blank.astype(int) - 5 * k, 0, 255).astype(np.uint8)) for k in range(6)]
    assert steps == [True, False, False, False, True, False]  # 5 levels a frame add up past 16 on frame 4


def test_bad_configs_are_refused() -> None:
    with pytest.raises(ValueError):
        VideoOptions(fps=0)
    with pytest.raises(ValueError):
        VideoOptions(batch_size=0)
