"""Word crops cut from whole degraded synthetic pages (vision.training.synth.page_words)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.models.recognition.vocab import encode
from vision.training.synth.fonts import discover_fonts
from vision.training.synth.page_words import MixedWords, PageWordCrops, _legible
from vision.training.synth.pages import PageRenderer

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
WORDS = ["Invoice", "TOTAL", "12.50", "Date:", "form", "of", "the", "Smith", "(555)", "ACME", "report"]


@pytest.fixture(scope="module")
def crops() -> PageWordCrops:
    fonts = discover_fonts([DEJAVU], include_system=False)
    return PageWordCrops(PageRenderer(fonts, lambda rng: WORDS[int(rng.integers(len(WORDS)))]), max_width=192)


def test_crops_are_recognizer_inputs_with_page_labels(crops: PageWordCrops) -> None:
    rng = np.random.default_rng(0)
    samples = [crops(rng) for _ in range(120)]
    for img, text in samples:
        assert img.dtype == np.uint8 and img.shape[0] == 32 and img.shape[2] == 3 and 8 <= img.shape[1] <= 192
        assert encode(text)  # a non-empty label inside the vocabulary (check boxes included)
    texts = {t for _, t in samples}
    assert len(texts & set(WORDS)) >= 5  # the page's own words (layouts also draw numbers and capitals)
    assert np.mean([img.mean() for img, _ in samples]) > 90  # paper around ink, not ink blobs


def test_streams_are_deterministic_and_independent(crops: PageWordCrops) -> None:
    """The same seed gives the same crops; a new generator starts from its own page (a validation set
    rendered in the parent process never leaks its queued crops into a worker's stream)."""
    a = [crops(np.random.default_rng(7)) for _ in range(1)]
    rng = np.random.default_rng(7)
    b = [crops(rng) for _ in range(30)]
    rng = np.random.default_rng(7)
    c = [crops(rng) for _ in range(30)]
    assert all(np.array_equal(x[0], y[0]) and x[1] == y[1] for x, y in zip(b, c))
    assert np.array_equal(a[0][0], b[0][0]) and a[0][1] == b[0][1]


def test_legibility_filter() -> None:
    paper = np.full((32, 60, 3), 240, np.uint8)
    assert not _legible(paper)  # nothing written
    assert not _legible(np.full_like(paper, 20))  # filled in
    word = paper.copy()
    word[10:22, 5:55:4] = 30  # vertical strokes
    assert _legible(word)


def test_mixed_source_shares_and_delegates(crops: PageWordCrops) -> None:
    class Words:
        calls = 0

        def __call__(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
            Words.calls += 1
            return np.full((32, 16, 3), 255, np.uint8), "w"

        def prewarm(self) -> str:
            return "delegated"

    rng = np.random.default_rng(1)
    assert all(MixedWords(Words(), crops, 0.0)(rng)[1] == "w" for _ in range(20))
    assert all(MixedWords(Words(), crops, 1.0)(rng)[1] != "w" for _ in range(20))
    mixed = MixedWords(Words(), crops, 0.3)
    share = np.mean([mixed(rng)[1] != "w" for _ in range(400)])
    assert 0.2 < share < 0.4
    assert mixed.prewarm() == "delegated"
    with pytest.raises(ValueError):
        MixedWords(Words(), crops, 1.5)


def test_training_config_mixes_page_words(tmp_path: Path) -> None:
    """``page_words`` in a training config builds the mixed source over the run's fonts and word lists."""
    from vision.training.recognition import RecognitionTrainConfig, _renderer
    from vision.training.synth.corpus import prepare_word_lists

    src = tmp_path / "src"
    src.mkdir()
    (src / "english").write_text("apple\nbanana\ncherry\nTobacco\n")
    prepare_word_lists(src, tmp_path / "words")
    cfg = RecognitionTrainConfig(fonts=(str(DEJAVU),), words=str(tmp_path / "words"), width=128, page_words=0.5)
    source = _renderer(cfg)
    assert isinstance(source, MixedWords) and source.pages.max_width == 128
    rng = np.random.default_rng(0)
    samples = [source(rng) for _ in range(40)]
    assert all(img.shape[0] == 32 and img.shape[1] <= 128 and text for img, text in samples)
    plain = _renderer(RecognitionTrainConfig(fonts=(str(DEJAVU),), words=str(tmp_path / "words")))
    assert not isinstance(plain, MixedWords)
