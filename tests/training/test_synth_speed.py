"""The generator's speed-ups change no sample: shared glyph prewarm, packed glyph caches, fast word-list reading."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest

from vision.models.recognition.vocab import normalize_text
from vision.training.synth.corpus import Corpus, TextSampler, _read_lines
from vision.training.synth.fonts import discover_fonts
from vision.training.synth.glyphs import GlyphCache, PackedFace, load_font, pack_face, render_glyph
from vision.training.synth.words import WordRenderer, WordSynthConfig

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
SANS = str(DEJAVU / "DejaVuSans.ttf")


def _renderer() -> WordRenderer:
    fonts = discover_fonts([DEJAVU], include_system=False)
    sampler = TextSampler(Corpus({"english": ["apple", "Tobacco", "cherry"], "french": ["été", "œuvre"]}))
    return WordRenderer(fonts, sampler, WordSynthConfig(max_width=192, font_px=(16, 20), p_sliver=0.5))


def test_packed_face_round_trips_glyphs() -> None:
    face = pack_face(SANS, 20, "Ag .é")
    font = load_font(SANS, 20)
    glyphs = face.glyphs()
    assert face.chars == "Ag .é" and face.metrics == font.getmetrics()
    for ch, g in glyphs.items():
        ref = render_glyph(font, ch)
        assert np.array_equal(g.mask, ref.mask) and (g.dx, g.dy, g.advance) == (ref.dx, ref.dy, ref.advance)
    assert glyphs[" "].mask.size == 0 and glyphs["g"].dy + glyphs["g"].mask.shape[0] > 0  # descender
    again = PackedFace.from_glyphs(SANS, 20, face.metrics, glyphs)
    assert np.array_equal(again.pixels, face.pixels) and np.array_equal(again.table, face.table)


def test_prewarmed_and_pickled_caches_render_the_same_masks() -> None:
    lazy, warm = GlyphCache(), GlyphCache()
    assert warm.prewarm([(SANS, "Helo wrd"), (str(DEJAVU / "DejaVuSerif.ttf"), "Helo")], [18, 24], processes=2) \
        == 2 * 2 * 8 - 2 * 4
    clone = pickle.loads(pickle.dumps(warm))
    assert len(clone) == len(warm) == 24
    for cache in (warm, clone):
        for size in (18, 24):
            for text in ("Hello world", "Hex!"):  # "x" and "!" are not prewarmed: rendered on first use
                a, b = lazy.render(SANS, size, text, 1.5), cache.render(SANS, size, text, 1.5)
                assert np.array_equal(a.mask, b.mask) and a.baseline == b.baseline
                assert np.array_equal(a.boxes, b.boxes)


def test_glyph_cache_is_bounded() -> None:
    cache = GlyphCache(max_glyphs=30)
    for size in (16, 18, 20, 22):
        cache.render(SANS, size, "abcdefghijkl")
    assert len(cache) <= 30 and cache.render(SANS, 22, "abc").mask.max() == 255


def test_prewarm_keeps_samples_identical() -> None:
    lazy, warm = _renderer(), _renderer()
    assert warm.prewarm(processes=2, top_chars=40, probe=300) > 40
    a = [lazy(np.random.default_rng([7, i])) for i in range(30)]
    b = [warm(np.random.default_rng([7, i])) for i in range(30)]
    for (img_a, text_a), (img_b, text_b) in zip(a, b):
        assert text_a == text_b and np.array_equal(img_a, img_b)


@pytest.mark.parametrize("text", [
    "apple\n  Tobacco\t\nco\u00f6perate\r\nna\u00efve\u00a0\nﬁne\nœuvre’s\n\u200bzero width\n\u2212-1\n",
    "cafe\u0301\nAngstro\u0308m\nplain\n",  # decomposed accents: not NFC, so the slow path
])
def test_fast_word_list_reading_matches_normalize_text(tmp_path, text: str) -> None:
    path = tmp_path / "words.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    expected = [w for w in (normalize_text(line.strip()) for line in text.splitlines()) if w and " " not in w]
    assert _read_lines(path) == expected and len(expected) >= 3
