"""Moving text: motion from matched words, tracks through pans/zooms/scrolls, transcript order and times.

Hand-built frames pin the rules; generated clips (benchmarks/motion_clips.py, rendered here at a small size)
run the whole pipeline with the template recognizer, and with the shipped OCR in test_video_motion_ocr.py.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from _video_synth import TemplateOCR

from vision.evaluation.transcript import score_transcript
from vision.pipelines.video.motion import FrameWords, apply, estimate_motion
from vision.pipelines.video.outputs import timeline_text
from vision.pipelines.video.pipeline import VideoOCR, VideoOptions
from vision.pipelines.video.timeline import TimelineOptions, merge_timeline, video_document
from vision.pipelines.video.transcript import reading_order, transcript_timeline
from vision.structures import Block, Line, Page, Word

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import motion_clips as mc

SIZE = (200, 400)  # frame (h, w) of the hand-built frames


def words_frame(boxes: dict[str, tuple[float, float, float, float]]) -> FrameWords:
    return FrameWords(tuple(boxes), np.array(list(boxes.values()), float).reshape(-1, 4), SIZE)


def page(
    idx: int, t: float, lines: list[tuple[str, tuple[float, float, float, float]]], conf: float = 0.9
) -> Page:
    """A frame whose OCR found ``lines`` (pixel boxes on a 400x200 frame; words split evenly)."""
    h, w = SIZE
    blocks = []
    for text, (x0, y0, x1, y1) in lines:
        parts = text.split()
        step = (x1 - x0) / len(parts)
        words = [
            Word(p, conf, ((x0 + i * step) / w, y0 / h, (x0 + (i + 1) * step - 2) / w, y1 / h))
            for i, p in enumerate(parts)
        ]
        blocks.append(Block([Line(words)]))
    return Page(page_idx=idx, dimensions=SIZE, blocks=blocks, timestamp=t)


def test_motion_recovers_shift_and_zoom() -> None:
    rng = np.random.default_rng(0)
    keys = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
    prev = {
        k: (x, y, x + 40, y + 12) for k, x, y in zip(keys, rng.uniform(0, 300, 7), rng.uniform(0, 180, 7))
    }
    truth = np.array([[1.2, 0.0, -15.0], [0.0, 1.2, 22.0]])
    cur = {k: tuple(apply(truth, np.array(b))[0]) for k, b in prev.items()}
    cur["golf"] = (5.0, 5.0, 45.0, 17.0)  # one word misplaced: RANSAC leaves it out
    motion = estimate_motion(words_frame(prev), words_frame(cur))
    assert motion is not None and motion.pairs == 7
    np.testing.assert_allclose(motion.layers[0], truth, atol=1e-3)  # pixels
    assert estimate_motion(words_frame(prev), words_frame({"hotel": (0, 0, 10, 10)})) is None


def test_text_moving_over_a_still_picture_gets_its_own_layer() -> None:
    still = {"evening": (50, 20, 120, 40), "news": (130, 20, 180, 40), "today": (190, 20, 250, 40)}
    band = {
        "markets": (100, 170, 160, 185),
        "rally": (170, 170, 210, 185),
        "storm": (220, 170, 270, 185),
        "coast": (280, 170, 330, 185),
    }
    moved = {k: (x0 - 60, y0, x1 - 60, y1) for k, (x0, y0, x1, y1) in band.items()}
    motion = estimate_motion(words_frame(still | band), words_frame(still | moved))
    assert motion is not None and len(motion.layers) == 2
    shifts = sorted(round(m[0, 2]) for m in motion.layers)
    assert shifts == [-60, 0]
    assert motion.layer_of([3, 4]) != motion.layer_of([0, 1])  # band words and title words differ


def scroll(lines: list[str], speed: float, times: list[float]) -> list[Page]:
    """Credits: ``lines`` 30 px apart, the first at y = 170, moving up ``speed`` px/s (16 px high)."""
    pages = []
    for k, t in enumerate(times):
        shown = []
        for i, text in enumerate(lines):
            y = 170 + 30 * i - speed * t
            if 0 <= y and y + 16 <= SIZE[0]:
                shown.append((text, (100.0, y, 300.0, y + 16)))
        pages.append(page(k, t, shown))
    return pages


CREDITS = [
    "Director Anna Bennett",
    "Music Linda Walker",
    "Camera Frank Parker",
    "Sound Sarah Walker",
    "Editor Peter Mason",
    "Writer Laura Palmer",
    "Casting Oliver Carter",
    "Makeup Emma Fisher",
]


def test_scrolling_lines_are_one_entry_each_in_order_with_edge_crossing_times() -> None:
    speed = 40.0
    times = [float(t) for t in range(12)]
    entries = transcript_timeline(scroll(CREDITS, speed, times), end=12.0)
    assert [e.text for e in entries] == CREDITS
    for i, e in enumerate(
        entries[1:5], start=1
    ):  # whole from (30 i + 16 - 30) / speed to (170 + 30 i) / speed
        assert e.start == pytest.approx((30 * i - 14) / speed, abs=0.05), e
        assert e.end == pytest.approx((170 + 30 * i) / speed, abs=0.05), e
    # the still-caption merge splits every moving line into pieces or drops it as flicker
    assert len(merge_timeline(scroll(CREDITS, speed, times), end=12.0)) != len(CREDITS)


def test_still_captions_give_the_merge_of_the_timeline_module() -> None:
    top, low = (40.0, 20.0, 160.0, 40.0), (40.0, 120.0, 160.0, 140.0)
    pages = [
        page(0, 0.0, [("HELLO", top)]),
        page(1, 1.0, [("HELLO", top), ("WORLD", low)]),
        page(2, 2.0, [("HELLO", top), ("WORLD", low), ("FLASH", (200.0, 60.0, 300.0, 80.0))]),
        page(3, 3.0, [("WORLD", low)]),
        page(4, 4.0, [("VIDEO", top), ("WORLD", low)]),
        page(5, 5.0, [("VIDEO", top)]),
        page(6, 6.0, [("VIDEO", top)]),
    ]
    moving = transcript_timeline(pages, end=7.0)
    still = merge_timeline(pages, end=7.0)
    assert [(e.text, e.start, e.end) for e in moving] == [(e.text, e.start, e.end) for e in still]
    assert [e.text for e in moving] == ["HELLO", "WORLD", "VIDEO"]


def test_a_line_leaving_and_coming_back_is_one_entry() -> None:
    """A pan right and back: "Total amount due" leaves the frame for a sample and returns to its place."""
    lines = [
        ("Total amount due", (20.0, 50.0, 140.0, 66.0)),
        ("Signature of the customer", (200.0, 150.0, 380.0, 166.0)),
        ("Notes and remarks", (420.0, 100.0, 540.0, 116.0)),
    ]
    pages = []
    for k, dx in enumerate([0, 160, 0]):
        shown = [(t, (x0 - dx, y0, x1 - dx, y1)) for t, (x0, y0, x1, y1) in lines]
        pages.append(page(k, float(k), [(t, b) for t, b in shown if b[0] >= 0 and b[2] <= SIZE[1]]))
    assert [len(p.blocks) for p in pages] == [2, 2, 2]
    entries = transcript_timeline(pages, end=3.0)
    assert [e.text for e in entries] == ["Total amount due", "Notes and remarks", "Signature of the customer"]
    # "Notes" (its last word ends at x = 538) is whole on screen while that edge is left of 400: from 138/160
    # of the first step to 22/160 into the second (the motion is linear between samples)
    times = [t for e in entries for t in (e.start, e.end)]
    assert times == pytest.approx([0.0, 3.0, 138 / 160, 1 + 22 / 160, 0.0, 3.0])


def test_a_line_read_whole_and_in_pieces_is_one_entry() -> None:
    """While the page scrolls, the OCR groups "Substance 36" as one line on some frames and as "Substance"
    and "36" on others: one entry, the whole line."""
    pages = []
    for k in range(6):
        y = 150.0 - 20 * k
        lines = [
            ("Total weight of the sample", (40.0, y - 60, 260.0, y - 44)),
            ("Net tobacco weight 749 mg", (40.0, y + 30, 250.0, y + 46)),
        ]
        if k % 2:
            lines += [("Substance", (40.0, y, 140.0, y + 16)), ("36", (160.0, y, 190.0, y + 16))]
        else:
            lines += [("Substance 36", (40.0, y, 190.0, y + 16))]
        pages.append(page(k, float(k), [(t, b) for t, b in lines if b[1] >= 0 and b[3] <= SIZE[0]]))
    entries = transcript_timeline(pages, end=6.0)
    assert [e.text for e in entries] == [
        "Total weight of the sample",
        "Substance 36",
        "Net tobacco weight 749 mg",
    ]


def test_reading_order_rows_then_left_to_right() -> None:
    boxes = np.array([[200, 10, 300, 30], [10, 12, 150, 28], [10, 50, 150, 70], [10, 90, 80, 110]], float)
    assert reading_order(boxes) == [1, 0, 2, 3]


def test_follow_motion_off_is_the_still_merge() -> None:
    pages = scroll(["Director Anna Bennett", "Music Linda Walker"], 40.0, [float(t) for t in range(10)])
    config = TimelineOptions(follow_motion=False)
    assert video_document(pages, source=None, end=10.0, config=config).timeline == merge_timeline(
        pages, end=10.0
    )


VOCAB = [
    "ALPHA",
    "BRAVO",
    "CHARLIE",
    "DELTA",
    "ECHO",
    "FOXTROT",
    "GOLF",
    "HOTEL",
    "INDIA",
    "JULIET",
    "KILO",
    "LIMA",
    "MIKE",
    "OSCAR",
    "PAPA",
    "ROMEO",
]


@pytest.fixture(scope="module")
def pan_clip(tmp_path_factory: pytest.TempPathFactory) -> mc.ClipTruth:
    """Two rendered pages of different words, 8 s, 640x360 at 10 fps: each page panned top to bottom with a
    25% zoom-in, a cut between them."""
    rows = [VOCAB[i : i + 2] for i in range(0, len(VOCAB), 2)]
    pages = [mc.rendered_page(rows[:4]), mc.rendered_page(rows[4:])]
    return mc.pan_zoom_clip(
        tmp_path_factory.mktemp("motion") / "pan.mp4",
        pages,
        size=(360, 640),
        seconds=8.0,
        rate=10,
        fill=0.7,
        background=(200, 200, 200),
    )  # light: TemplateOCR reads dark ink


def score(doc, truth: mc.ClipTruth):
    step = 1 / truth.rate
    return score_transcript(
        timeline_text(doc).splitlines(),
        [(e.text, e.start, e.end) for e in doc.timeline],
        [(w.text, w.seconds) for w in truth.words],
        [(v.text, v.first, v.last + step, v.seconds) for v in truth.lines if v.first],
    )


def test_pan_and_zoom_clip_gives_each_word_once(pan_clip: mc.ClipTruth) -> None:
    doc = VideoOCR(TemplateOCR(VOCAB), VideoOptions(fps=1.0, max_fps=2.0, batch_size=8))(pan_clip.path)
    result = score(doc, pan_clip)
    assert result.words_shown >= 12 and result.recall >= 0.9, result
    assert result.precision == 1.0 and result.duplicate_rate <= 0.05, result
    still = VideoOCR(
        TemplateOCR(VOCAB), VideoOptions(fps=1.0, batch_size=8, timeline=TimelineOptions(follow_motion=False))
    )
    assert score(still(pan_clip.path), pan_clip).recall < result.recall  # what the still merge loses
