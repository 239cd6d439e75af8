"""Drawing helpers shared by the page layouts: sizes, ink colours, styled fonts, aligned lines of words."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from vision.training.synth.fonts import FontInfo

_INK = ((0, 0, 0), (25, 25, 25), (50, 50, 50), (20, 30, 110), (10, 10, 70), (120, 20, 20))
_INK_P = (0.55, 0.15, 0.08, 0.12, 0.05, 0.05)


def _size(rng: np.random.Generator, lo: float, hi: float) -> int:
    return int(round(np.exp(rng.uniform(np.log(lo), np.log(hi)))))


def _ink(rng: np.random.Generator) -> tuple[int, int, int]:
    return _INK[int(rng.choice(len(_INK), p=_INK_P))]


def _styled(r, rng: np.random.Generator, want: str, base: FontInfo | None = None) -> FontInfo:
    """A font with style ``want`` (bold/italic/mono...), preferring the family of ``base``."""
    pool = [f for f in r.fonts if want in f.styles]
    if base is not None:
        same = [f for f in pool if f.family == base.family]
        pool = same or pool
    return pool[int(rng.integers(len(pool)))] if pool else (base or r._pick_font(rng))


def _line(
    r,
    c,
    rng,
    x0: float,
    x1: float,
    baseline: float,
    words: Sequence[str],
    font: FontInfo,
    size: int,
    fill,
    align: str = "left",
) -> float:
    """Draw ``words`` aligned left/center/right within ``[x0, x1]``; returns the x after the text.

    A share ``r.letter_spacing`` of the lines without lower-case letters (receipt rows, display type) is
    letter-spaced (0.1-0.45 em after each character, at most 0.6 of the font's space); with the share at 0
    no random number is drawn, so pages are those of renderers without the option."""
    from vision.training.synth.letter_spacing import tracked_length
    from vision.training.synth.pages import _font, quantize_size

    f = _font(str(font.path), size)  # _font quantizes the size as text_run does
    space, tracking = f.getlength(" "), 0.0
    if r.letter_spacing and all(w.upper() == w for w in words) and rng.random() < r.letter_spacing:
        # at most 0.6 of a space, so a spaced line's word gaps stay over 2.6x its letter gaps
        tracking = min(quantize_size(size) * rng.uniform(0.1, 0.45), 0.6 * space)
    width = sum(tracked_length(f, w, tracking) for w in words) + (space + tracking) * max(len(words) - 1, 0)
    x = x0 if align == "left" else (x1 - width if align == "right" else (x0 + x1 - width) / 2)
    return r.text_run(c, max(x, x0), baseline, words, font, size, fill, max_x=x1, tracking=tracking)


def _words(r, rng, font, n: int, upper: bool = False) -> list[str]:
    return [r.word(rng, font, upper) for _ in range(n)]
