"""The ``lang`` option: which languages a document is in, and so which lexicons (and models) read it.

``lang`` is one language code or several joined by ``+`` (``"de"``, ``"de+fr"``, Tesseract's three-letter
codes too: ``"deu+fra"``). Every shipped recognizer reads the Latin alphabet with the accented letters of
these languages, so the choice picks the lexicon of lexicon-aware decoding: the union of the named
languages' word lists. ``None`` (the default) keeps the English lexicon; the model still reads accented
letters of every language below.

Bundled lexicons (``lexicons/<code>.txt.gz``, up to 100,000 words each, shortest first; sources and licences
in ``lexicons/README.md``): Debian word lists (``wngerman wfrench wspanish witalian wportuguese wdutch
wpolish wdanish wswedish wnorwegian``) and Debian hunspell dictionaries expanded with ``unmunch`` (Czech,
Slovak, Hungarian, Romanian, Slovenian, Croatian).

Text in a script no shipped model reads is refused here (``lang="ru"``) and flagged on pages
(:mod:`vision.predictors.recognition.script`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the lexicon module imports torch; parse_lang (the CLI's check) must not
    from vision.predictors.recognition.lexicon import Lexicon

__all__ = ["LANGUAGES", "UNSUPPORTED", "lexicon_for", "parse_lang", "recognizer_for"]

# code -> English name; each has a bundled lexicon of the same code.
LANGUAGES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "pl": "Polish", "cs": "Czech", "sk": "Slovak", "da": "Danish", "sv": "Swedish",
    "nb": "Norwegian", "hu": "Hungarian", "ro": "Romanian", "sl": "Slovenian", "hr": "Croatian",
}
_ALIASES = {
    "eng": "en", "deu": "de", "ger": "de", "fra": "fr", "fre": "fr", "spa": "es", "ita": "it", "por": "pt",
    "nld": "nl", "dut": "nl", "pol": "pl", "ces": "cs", "cze": "cs", "slk": "sk", "slo": "sk", "dan": "da",
    "swe": "sv", "nor": "nb", "no": "nb", "nob": "nb", "hun": "hu", "ron": "ro", "rum": "ro", "slv": "sl",
    "hrv": "hr",
}
# Languages whose script no shipped recognizer reads.
UNSUPPORTED = {
    "ru": "Cyrillic", "rus": "Cyrillic", "uk": "Cyrillic", "ukr": "Cyrillic", "bg": "Cyrillic", "bul": "Cyrillic",
    "sr": "Cyrillic", "srp": "Cyrillic", "el": "Greek", "ell": "Greek", "gre": "Greek", "zh": "CJK", "chi_sim": "CJK",
    "chi_tra": "CJK", "ja": "CJK", "jpn": "CJK", "ko": "CJK", "kor": "CJK", "ar": "Arabic", "ara": "Arabic",
    "fa": "Arabic", "he": "Hebrew", "heb": "Hebrew", "hi": "Devanagari", "hin": "Devanagari", "th": "Thai",
    "tha": "Thai", "hy": "Armenian", "ka": "Georgian",
}
# Language-specific recognizers, when one exists (code -> registered architecture); none ship yet.
MODELS: dict[str, str] = {}


def parse_lang(lang: str | None) -> tuple[str, ...]:
    """``"de+fr"`` -> ``("de", "fr")`` (sorted, deduplicated); ``None`` or ``""`` -> ``()`` (the default).

    Raises:
        ValueError: an unknown code, or one whose script no shipped recognizer reads.
    """
    if not lang:
        return ()
    codes = []
    for part in str(lang).replace(",", "+").split("+"):
        code = part.strip().lower()
        if not code:
            continue
        code = _ALIASES.get(code, code)
        if code in UNSUPPORTED:
            raise ValueError(f"lang {part!r}: no shipped recognizer reads {UNSUPPORTED[code]} script "
                             f"(supported: {'+'.join(sorted(LANGUAGES))})")
        if code not in LANGUAGES:
            raise ValueError(f"unknown lang {part!r}: expected codes among {', '.join(sorted(LANGUAGES))} "
                             "joined by '+'")
        codes.append(code)
    return tuple(sorted(set(codes)))


@lru_cache(maxsize=8)
def lexicon_for(lang: str | None, prior: float = 10.0) -> Lexicon:
    """The lexicon of ``lang``: the union of its languages' word lists (English for the default)."""
    from vision.predictors.recognition.lexicon import Lexicon, load_lexicon

    codes = parse_lang(lang) or ("en",)
    if len(codes) == 1:
        return load_lexicon(codes[0], prior)
    words: set[str] = set()
    for code in codes:
        words |= load_lexicon(code, prior).words
    return Lexicon(words, prior=prior)


def recognizer_for(lang: str | None, arch: str | None = None) -> str | None:
    """The recognition architecture for ``lang``: ``arch`` when given, else a language-specific model if one
    ships for every named language, else ``None`` (the registry default)."""
    if arch is not None:
        return arch
    models = {MODELS.get(code) for code in parse_lang(lang)}
    return models.pop() if len(models) == 1 and None not in models else None
