"""A weighted mix of the word generators, built from a training config.

``mix`` names generators and their shares of the samples:

* ``words``: document word crops (:class:`~vision.training.synth.words.WordRenderer`, forms and receipts);
* ``multilingual``: the same renderer over the non-English word lists (80% of dictionary words foreign,
  frequent short words of those languages, more words and phrases, fewer codes);
* ``scene``: words on photographs (:mod:`~vision.training.synth.scene`);
* ``overlay``: subtitles, captions and UI text (:mod:`~vision.training.synth.overlay`);
* ``receipt``: thermal, dot-matrix and laser receipts (:mod:`~vision.training.synth.receipt`).

All share one glyph cache (one prewarm before the workers fork) and one photo bank. Each sample draws its
generator from the same ``rng``, so a seed still fixes everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vision.models.recognition.vocab import VOCAB
from vision.training.synth.corpus import Corpus, TextSampler
from vision.training.synth.fonts import FontInfo
from vision.training.synth.glyphs import GlyphCache

__all__ = ["GENERATORS", "MixedRenderer", "build_mix"]

GENERATORS = ("words", "multilingual", "scene", "overlay", "receipt")
_MULTILINGUAL_WEIGHTS = {"word": 0.62, "common": 0.04, "phrase": 0.12, "number": 0.06, "code": 0.02,
                         "random": 0.01, "checkbox": 0.0, "form": 0.02}


def _tuples(values: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) else v
            for k, v in values.items()}


def build_mix(fonts: Sequence[FontInfo], corpus: Corpus, mix: dict[str, float], *, max_width: int,
              words: Any = None, photos: str | None = None,
              overrides: dict[str, dict[str, Any]] | None = None,
              text_weights: dict[str, float] | None = None) -> MixedRenderer:
    """The generators named in ``mix`` (``words`` may be passed ready-made: the configured WordRenderer);
    ``text_weights`` replaces entries of every text sampler's kind weights (``TextSampler.WEIGHTS``)."""
    from vision.training.synth.words import WordRenderer, WordSynthConfig

    unknown = set(mix) - set(GENERATORS)
    if unknown:
        raise ValueError(f"unknown generators {sorted(unknown)}; expected some of {GENERATORS}")
    overrides = overrides or {}
    tw = dict(text_weights or {})
    glyphs = words.glyphs if words is not None else GlyphCache()
    parts: list[tuple[str, Any, float]] = []
    bank = None
    if {"scene", "overlay"} & {k for k, v in mix.items() if v > 0}:
        from vision.training.synth.photos import PhotoBank

        bank = PhotoBank(photos)
    for name in GENERATORS:
        weight = float(mix.get(name, 0.0))
        if weight <= 0:
            continue
        o = _tuples(overrides.get(name, {}))
        if name == "words":
            gen = words if words is not None else WordRenderer(fonts, TextSampler(corpus, weights=tw), WordSynthConfig(
                max_width=max_width, **o))
        elif name == "multilingual":
            sampler = TextSampler(corpus, foreign=o.pop("foreign", 0.8),
                                  weights={**o.pop("weights", _MULTILINGUAL_WEIGHTS), **tw})
            gen = WordRenderer(fonts, sampler, WordSynthConfig(max_width=max_width, **o))
        elif name == "scene":
            from vision.training.synth.scene import SceneRenderer, SceneSynthConfig

            gen = SceneRenderer(fonts, TextSampler(corpus, foreign=o.pop("foreign", 0.15), weights=tw), bank,
                                SceneSynthConfig(max_width=max_width, **o), glyphs)
        elif name == "overlay":
            from vision.training.synth.overlay import OverlayRenderer, OverlaySynthConfig

            gen = OverlayRenderer(fonts, TextSampler(corpus, foreign=o.pop("foreign", 0.25), weights=tw), bank,
                                  OverlaySynthConfig(max_width=max_width, **o), glyphs)
        else:
            from vision.training.synth.receipt import ReceiptRenderer, ReceiptSynthConfig

            gen = ReceiptRenderer(fonts, TextSampler(corpus, foreign=o.pop("foreign", 0.1), weights=tw),
                                  ReceiptSynthConfig(max_width=max_width, **o), glyphs)
        if hasattr(gen, "glyphs"):
            gen.glyphs = glyphs
        parts.append((name, gen, weight))
    return MixedRenderer(parts, glyphs)


class MixedRenderer:
    """Callable ``rng -> (image, text)`` drawing each sample from one of ``parts`` by weight."""

    def __init__(self, parts: Sequence[tuple[str, Any, float]], glyphs: GlyphCache) -> None:
        if not parts:
            raise ValueError("empty generator mix")
        self.names = [n for n, _, _ in parts]
        self.parts = [g for _, g, _ in parts]
        self.cum = np.cumsum([w for _, _, w in parts])
        self.glyphs = glyphs

    def __call__(self, rng: np.random.Generator) -> tuple[np.ndarray, str]:
        i = min(int(np.searchsorted(self.cum, rng.random() * self.cum[-1], side="right")), len(self.parts) - 1)
        return self.parts[i](rng)

    def prewarm(self, processes: int = 1) -> int:
        """Prewarm the shared glyph cache through the first part that can (a word renderer), with every letter
        of the vocabulary when other generators draw foreign words (each worker would render them lazily)."""
        extra = "".join(c for c in VOCAB if c.isalpha()) if self.names != ["words"] else ""
        for part in self.parts:
            if hasattr(part, "prewarm"):
                return part.prewarm(processes, extra=extra)
        return len(self.glyphs)
