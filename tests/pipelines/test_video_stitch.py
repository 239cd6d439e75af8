"""Lines wider than the frame assembled from windows (vision.pipelines.video.stitch); adaptive sampling."""

import numpy as np
import pytest
from _video_synth import CAPTIONS, draw_frame

from vision.pipelines.video.adaptive import AdaptiveRule
from vision.pipelines.video.pipeline import VideoOptions
from vision.pipelines.video.stitch import extend, join, trim_cut

TICKER = (
    "Markets rally as central bank holds rates steady. Storm warning issued for the northern coast tonight"
)


def windows(text: str, width: int, step: int) -> list[str]:
    """What a ``width``-character window sees as ``text`` scrolls left ``step`` characters per sample."""
    padded = " " * width + text + " " * width
    return [padded[k : k + width].strip() for k in range(0, len(padded) - width + 1, step)]


@pytest.mark.parametrize("step", [4, 12, 20])
def test_windows_of_a_ticker_join_into_the_whole_line(step: int) -> None:
    line = ""
    for window in windows(TICKER, 40, step):
        line = extend(line, window)
    assert line == TICKER


def test_join_either_side_containment_and_unrelated_text() -> None:
    assert join("holds rates steady. Storm", "Markets rally as central bank holds rates") == (
        "Markets rally as central bank holds rates steady. Storm"
    )
    assert join("Markets rally as central bank", "rally as central") == "Markets rally as central bank"
    assert join("Markets rally as central bank", "City council approves a bridge") is None


def test_join_keeps_the_later_reading_of_the_overlap() -> None:
    # the earlier window had "central" at its cut edge and misread it
    assert join("Markets rally as centri", "rally as central bank") == "Markets rally as central bank"


def test_trim_cut_drops_the_words_cut_by_the_edges() -> None:
    assert trim_cut("kets rally as centr", True, True) == "rally as"
    assert trim_cut("kets rally", False, True) == "kets"
    assert trim_cut("rally", True, True) == "rally"


def test_adaptive_rule_samples_motion_at_the_probe_rate_and_stillness_at_the_base_rate() -> None:
    rng = np.random.default_rng(0)
    texture = np.kron(rng.integers(0, 255, (40, 70, 3)), np.ones((8, 8, 1))).astype(np.uint8)  # 320x560
    moving = [np.ascontiguousarray(np.roll(texture, 12 * k, axis=1)) for k in range(6)]
    rule = AdaptiveRule(every=2)
    assert [rule(f) for f in moving] == [True] * 6  # every probe of a pan
    assert [rule(moving[-1]) for _ in range(6)] == [True, False] * 3  # the base grid when still
    blank, caption = draw_frame([]), draw_frame([CAPTIONS[0]])
    captions = AdaptiveRule(every=2)
    assert [captions(f) for f in (blank, blank, blank, caption, caption)] == [True, False, True, False, True]
    scene_only = AdaptiveRule(every=2, floor=False)
    assert [scene_only(f) for f in (blank, blank, caption, caption, blank)] == [
        True,
        False,
        True,
        False,
        True,
    ]
    with pytest.raises(ValueError):
        AdaptiveRule(every=0)


def test_adaptive_config_probes_at_max_fps() -> None:
    config = VideoOptions(fps=1.0, max_fps=2.0)
    assert config.probe_fps == 2.0 and config.interval == 0.5 and config.every == 2
    rules = config.merge_rules  # two base frames, one missed base frame; two readings of moving text
    assert (rules.min_frames, rules.max_gap, rules.moving_min_frames) == (4, 3, 2)
    assert isinstance(config.sampler("clip.mp4").scene, AdaptiveRule)
    assert VideoOptions(fps=1.0).sampler("clip.mp4").scene is None
    assert VideoOptions(fps=1.0, max_fps=2.4).probe_fps == 2.0  # a multiple of fps: the grid stays aligned
    with pytest.raises(ValueError):
        VideoOptions(fps=2.0, max_fps=1.0)
