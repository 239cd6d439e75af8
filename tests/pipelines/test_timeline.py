"""The temporal merge rules of vision.pipelines.video.timeline: on hand-built frames with known OCR lines, and on
the OCR of a generated video (the real ``vision.ocr_predictor()`` when its shipped weights exist, the
deterministic template recognizer of _video_synth.py until then).
"""

from pathlib import Path

import pytest
from _video_synth import CAPTIONS, TemplateOCR, check_subtitles, check_timeline, encode_cfr

from vision.errors import WeightsError
from vision.pipelines.video.timeline import (
    TimelineOptions,
    box_iou,
    line_observations,
    merge_timeline,
    video_document,
)
from vision.pipelines.video.pipeline import VideoOCR, VideoOptions
from vision.structures import Block, Line, Page, Word

TOP = (0.10, 0.10, 0.40, 0.20)
LOW = (0.10, 0.60, 0.40, 0.70)


def frame(idx: int, t: float, *lines: tuple[str, float, tuple[float, float, float, float]]) -> Page:
    """A sampled frame at position ``idx`` and time ``t`` whose OCR found ``lines`` (one word each)."""
    blocks = [Block([Line([Word(text, conf, box)])]) for text, conf, box in lines]
    return Page(page_idx=idx, dimensions=(100, 200), blocks=blocks, timestamp=t)


def jitter(box: tuple[float, float, float, float], d: float) -> tuple[float, float, float, float]:
    return (box[0] + d, box[1] + d, box[2] + d, box[3] - d)


def test_consecutive_readings_become_one_entry_with_the_best_reading() -> None:
    pages = [
        frame(0, 0.0),
        frame(1, 1.0, ("HELL0", 0.60, jitter(TOP, 0.01))),
        frame(2, 2.0, ("HELLO", 0.95, TOP)),
        frame(3, 3.0, ("Hello", 0.80, jitter(TOP, -0.01))),
        frame(4, 4.0),
    ]
    (entry,) = merge_timeline(pages, end=5.0)
    assert (entry.text, entry.start, entry.end) == ("HELLO", 1.0, 4.0)
    assert entry.confidence == 0.95 and entry.geometry == TOP


def test_one_sample_flicker_is_dropped_unless_min_frames_is_one() -> None:
    pages = [
        frame(0, 0.0),
        frame(1, 1.0, ("FLASH", 0.99, TOP)),
        frame(2, 2.0),
        frame(3, 3.0, ("STAY", 0.9, LOW)),
        frame(4, 4.0, ("STAY", 0.9, LOW)),
    ]
    assert [e.text for e in merge_timeline(pages, end=5.0)] == ["STAY"]
    kept = merge_timeline(pages, end=5.0, config=TimelineOptions(min_frames=1))
    assert [(e.text, e.start, e.end) for e in kept] == [("FLASH", 1.0, 2.0), ("STAY", 3.0, 5.0)]


def test_a_missed_sample_is_bridged_and_a_longer_absence_splits() -> None:
    seen = ("TITLE", 0.9, TOP)
    one_gap = [
        frame(0, 0.0, seen),
        frame(1, 1.0, seen),
        frame(2, 2.0),
        frame(3, 3.0, seen),
        frame(4, 4.0, seen),
    ]
    assert [(e.start, e.end) for e in merge_timeline(one_gap, end=5.0)] == [(0.0, 5.0)]
    two_gap = [
        frame(0, 0.0, seen),
        frame(1, 1.0, seen),
        frame(2, 2.0),
        frame(3, 3.0),
        frame(4, 4.0, seen),
        frame(5, 5.0, seen),
    ]
    assert [(e.start, e.end) for e in merge_timeline(two_gap, end=6.0)] == [(0.0, 2.0), (4.0, 6.0)]
    strict = merge_timeline(one_gap, end=5.0, config=TimelineOptions(max_gap=0))
    assert [(e.start, e.end) for e in strict] == [(0.0, 2.0), (3.0, 5.0)]


def test_scene_change_holes_count_as_the_samples_they_stand_for() -> None:
    # Kept frames at sample positions 0, 5 and 6 out of 10 (the others were unchanged and skipped).
    pages = [
        frame(0, 0.0, ("LONG", 0.9, TOP)),
        frame(5, 2.5, ("LONG", 0.9, TOP), ("BLINK", 0.9, LOW)),
        frame(6, 3.0, ("LONG", 0.9, TOP)),
    ]
    entries = merge_timeline(pages, end=5.0, samples=10)
    assert [(e.text, e.start, e.end) for e in entries] == [("LONG", 0.0, 5.0)]  # BLINK stood for one sample


def test_same_text_elsewhere_and_other_text_here_stay_apart() -> None:
    pages = [frame(i, float(i), ("SAME", 0.9, TOP), ("SAME", 0.9, LOW)) for i in range(3)]
    pages += [frame(i, float(i), ("OTHER WORDS", 0.9, TOP)) for i in range(3, 5)]
    entries = merge_timeline(pages, end=5.0)
    assert [(e.text, e.start, e.end, e.geometry) for e in entries] == [
        ("SAME", 0.0, 3.0, TOP),
        ("SAME", 0.0, 3.0, LOW),
        ("OTHER WORDS", 3.0, 5.0, TOP),
    ]


def test_duplicate_lines_within_a_frame_collapse_to_the_most_confident() -> None:
    page = frame(0, 0.0, ("EXIT", 0.5, TOP), ("EXIT", 0.9, jitter(TOP, 0.005)), ("EXIT", 0.8, LOW))
    assert [(o.text, o.confidence) for o in line_observations(page)] == [("EXIT", 0.9), ("EXIT", 0.8)]


def test_default_end_is_one_median_interval_after_the_last_frame() -> None:
    pages = [frame(i, 0.5 * i, ("TICK", 0.9, TOP)) for i in range(4)]
    (entry,) = merge_timeline(pages)
    assert (entry.start, entry.end) == (0.0, 2.0)


def test_video_document_orders_frames_and_keeps_them() -> None:
    pages = [frame(1, 1.0, ("A B", 0.9, TOP)), frame(0, 0.0, ("A B", 0.9, TOP))]
    doc = video_document(pages, source="clip.mp4", end=2.0)
    assert [p.page_idx for p in doc.pages] == [0, 1] and doc.source == "clip.mp4"
    assert [(e.text, e.start, e.end) for e in doc.timeline] == [("A B", 0.0, 2.0)]


def test_bad_frames_are_refused() -> None:
    with pytest.raises(ValueError, match="timestamp"):
        merge_timeline([Page(page_idx=0, dimensions=(1, 1))])
    with pytest.raises(ValueError, match="sample position"):
        merge_timeline([frame(3, 0.0), frame(1, 1.0)], end=2.0)
    with pytest.raises(ValueError):
        TimelineOptions(min_frames=0)
    assert merge_timeline([]) == []


def test_box_iou() -> None:
    assert box_iou(TOP, TOP) == pytest.approx(1.0)
    assert box_iou(TOP, LOW) == 0.0
    assert box_iou((0, 0, 1, 1), (0.5, 0, 1, 1)) == pytest.approx(0.5)


@pytest.fixture(scope="module")
def ocr() -> object:
    """Real OCR when the shipped weights are installed, else the template recognizer."""
    import vision

    try:
        return vision.ocr_predictor()
    except WeightsError:
        return TemplateOCR([c.text for c in CAPTIONS])


def test_merge_on_the_ocr_of_a_decoded_video(ocr: object, tmp_path: Path) -> None:
    """Scene-change sampling at 4 fps: 7 of 36 probes reach the OCR; the merge must still time every caption
    within a quarter second, drop the 0.2 s flash and write valid subtitles."""
    clip = encode_cfr(tmp_path / "clip.mp4")
    doc = VideoOCR(ocr, VideoOptions(fps=4.0, scene_change=True, batch_size=8))(clip.path)
    assert len(doc.pages) == 7
    check_timeline(doc, clip, 0.25)
    check_subtitles(doc)
