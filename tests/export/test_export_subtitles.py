"""Subtitles are parsed back with small strict parsers that follow the SubRip and WebVTT grammars."""

import re

import pytest

from vision.export.subtitles import format_timestamp, to_srt, to_vtt
from vision.structures import Document, TimelineEntry

_SRT_TIME = r"(\d{2,}):([0-5]\d):([0-5]\d),(\d{3})"
_VTT_TIME = r"(\d{2,}):([0-5]\d):([0-5]\d)\.(\d{3})"


def _ms(groups: tuple[str, ...]) -> int:
    h, m, s, ms = (int(g) for g in groups)
    return ((h * 60 + m) * 60 + s) * 1000 + ms


def _check_cues(cues: list[tuple[int, int, str]]) -> None:
    for start, end, text in cues:
        assert start < end and text and "\n\n" not in text
    assert [c[:2] for c in cues] == sorted(c[:2] for c in cues)


def parse_srt(text: str) -> list[tuple[int, int, str]]:
    """Strict SubRip: index line counting 1, 2, ..., a timing line, text lines, blank-line separated."""
    assert text.endswith("\n") and not text.endswith("\n\n\n")
    cues = []
    for expected, block in enumerate(text.rstrip("\n").split("\n\n"), start=1):
        index, timing, *lines = block.split("\n")
        assert index == str(expected)
        match = re.fullmatch(f"{_SRT_TIME} --> {_SRT_TIME}", timing)
        assert match, timing
        assert lines and all(line.strip() for line in lines)
        cues.append((_ms(match.groups()[:4]), _ms(match.groups()[4:]), "\n".join(lines)))
    _check_cues(cues)
    return cues


def parse_vtt(text: str) -> list[tuple[int, int, str]]:
    """Strict WebVTT (no cue identifiers or settings): header, then timing line and payload per cue."""
    header, *blocks = text.rstrip("\n").split("\n\n")
    assert header == "WEBVTT"
    cues = []
    for block in blocks:
        timing, *lines = block.split("\n")
        match = re.fullmatch(f"{_VTT_TIME} --> {_VTT_TIME}", timing)
        assert match, timing
        assert lines and all(line.strip() and "-->" not in line for line in lines)
        assert not re.search(r"<|&(?!amp;|lt;|gt;)", "\n".join(lines))  # escaped payload
        cues.append((_ms(match.groups()[:4]), _ms(match.groups()[4:]), "\n".join(lines)))
    _check_cues(cues)
    return cues


EXPECTED = [
    (0, 2500, "first <b>"),
    (2000, 3000, "same start"),
    (2000, 4250, "second"),
    (3661000, 3662500, "late\ntwo lines"),
]


def test_srt_is_valid_and_sorted(document):
    text = to_srt(document)
    assert parse_srt(text) == EXPECTED
    assert "01:01:01,000 --> 01:01:02,500" in text
    assert document.to_srt() == text


def test_vtt_is_valid_sorted_and_escaped(document):
    text = to_vtt(document)
    cues = parse_vtt(text)
    assert [c[:2] for c in cues] == [c[:2] for c in EXPECTED]
    assert cues[0][2] == "first &lt;b&gt;"
    assert document.to_vtt() == text


def test_blank_entries_are_skipped_and_short_cues_last_a_millisecond():
    doc = Document(
        timeline=[
            TimelineEntry("  ", 0.0, 1.0, 1.0, (0, 0, 1, 1)),
            TimelineEntry("flash", 5.0, 5.0001, 1.0, (0, 0, 1, 1)),
            TimelineEntry("--> arrow", 6.0, 7.0, 1.0, (0, 0, 1, 1)),
        ]
    )
    assert parse_srt(to_srt(doc))[0] == (5000, 5001, "flash")
    assert parse_vtt(to_vtt(doc))[1][2] == "--&gt; arrow"


def test_empty_timeline():
    assert to_srt(Document()) == ""
    assert parse_vtt(to_vtt(Document())) == []


def test_timestamp_format():
    assert format_timestamp(3661.5) == "01:01:01,500"
    assert format_timestamp(0.0015, separator=".") == "00:00:00.002"
    assert format_timestamp(360000.0) == "100:00:00,000"


@pytest.mark.parametrize(
    ("start", "end"), [(-1.0, 1.0), (2.0, 1.0), (0.0, float("inf")), (float("nan"), 1.0)]
)
def test_invalid_times_raise(start, end):
    doc = Document(timeline=[TimelineEntry("x", start, end, 1.0, (0, 0, 1, 1))])
    with pytest.raises(ValueError):
        to_srt(doc)
