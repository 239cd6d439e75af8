"""Must-show with the shipped ``vision.ocr_predictor()``: scrolling credits and a news ticker, generated here
(benchmarks/scroll_clips.py at 640x360, 8 s), read at the `vision video` defaults (adaptive sampling,
1-2 fps).

Each credit line is one entry in scroll order with start and end within 1 s of when it is whole on screen;
the ticker is one line holding >= 75% of the words shown for 1 s or more; no duplicate lines.
"""

import sys
from pathlib import Path

import pytest

import vision
from vision.evaluation.transcript import score_transcript
from vision.pipelines.video.outputs import timeline_text
from vision.pipelines.video.pipeline import VideoOCR, VideoOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import motion_clips as mc
import scroll_clips as sc

DEFAULTS = VideoOptions(fps=1.0, max_fps=2.0, batch_size=8)  # `vision video` without options


@pytest.fixture(scope="module")
def ocr() -> object:
    return vision.ocr_predictor()  # shipped weights, on purpose: no fallback here


def run(ocr: object, truth: mc.ClipTruth) -> tuple[object, object]:
    doc = VideoOCR(ocr, DEFAULTS)(truth.path)
    step = 1 / truth.rate
    score = score_transcript(
        timeline_text(doc).splitlines(),
        [(e.text, e.start, e.end) for e in doc.timeline],
        [(w.text, w.seconds) for w in truth.words],
        [(v.text, v.first, v.last + step, v.seconds) for v in truth.lines if v.first is not None],
    )
    return doc, score


def test_scrolling_credits(ocr: object, tmp_path: Path) -> None:
    truth = sc.credits_clip(
        tmp_path / "credits.mp4", size=(360, 640), seconds=8.0, rate=10, lines=6, text_px=20
    )
    doc, score = run(ocr, truth)
    assert score.recall >= 0.75 and score.duplicate_lines == 0, (score, doc.timeline)
    assert score.lines_found == score.lines_timed == 6 and score.within(1.0) == 1.0, (score, doc.timeline)
    assert [e.text for e in doc.timeline] == [v.text for v in truth.lines]  # scroll order, each once


def test_news_ticker(ocr: object, tmp_path: Path) -> None:
    truth = sc.ticker_clip(tmp_path / "ticker.mp4", size=(360, 640), seconds=8.0, rate=10)
    doc, score = run(ocr, truth)
    assert score.recall >= 0.75 and score.duplicate_lines == 0, (score, doc.timeline)
    assert len(doc.timeline) == 2, doc.timeline  # the still headline and the ticker, one entry each
