"""Find font files and classify their style, so that synthetic renderers can draw a varied, balanced mix.

Fonts are never committed: they come from Debian/PyPI font packages installed or carried at training time
(``.cache/fonts`` on the dev machine, a carried folder on the GPU machine) plus the system font directories.
Discovery is deterministic (sorted by file name, duplicates by name dropped), so a seed picks the same font
on every machine that holds the same files.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "STYLES",
    "SYSTEM_FONT_DIRS",
    "FontInfo",
    "classify_style",
    "discover_fonts",
    "filter_fonts",
    "font_covers",
    "subset_fonts",
]

SYSTEM_FONT_DIRS: tuple[Path, ...] = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"),
                                      Path.home() / ".fonts", Path.home() / ".local/share/fonts")
_EXTENSIONS = (".ttf", ".otf")

STYLES = ("serif", "sans", "mono", "bold", "italic", "condensed", "light", "typewriter", "handwriting", "symbol")

# Family-name hints; a file name is matched case-insensitively against these (first hit per category wins).
_MONO = ("mono", "courier", "consol", "inconsolata", "hack", "anonymous", "firacode", "jetbrains", "agave",
         "mononoki", "cousine", "typewriter", "nimbusmonops", "freemono", "oxygenmono")
_TYPEWRITER = ("courier", "typewriter", "prestige", "nimbusmonops", "freemono", "special elite")
_SERIF = ("serif", "times", "roman", "tinos", "caladea", "garamond", "libertine", "junicode", "stix",
          "charis", "c059", "p052", "bookman", "gen", "quattrocento", "palatino", "georgia", "cambria",
          "century", "bodoni", "baskerville", "caslon", "crimson", "merriweather")
_SYMBOL = ("symbol", "math", "d050000l", "stixsize", "stixintegrals", "stixnonunicode", "stixvariants", "dingbat",
           "biolinum_k", "smallcaps",
           "emoji", "asana")
_HANDWRITING = ("comic", "z003", "script", "hand", "chancery")
_CONDENSED = ("condensed", "cond", "narrow", "compressed", "semicondensed")
_BOLD = ("bold", "black", "heavy", "demi", "semibold", "extrabold", "bd", "_rb", "basb", "-b.", " b.")
_ITALIC = ("italic", "oblique", "ita", "_ri", "_i.", "basi", "basbi", " i.", " bi.", "-bi.")
_LIGHT = ("light", "thin", "hairline", "extralight")


@dataclass(frozen=True)
class FontInfo:
    """One font file and the style tags read from its name (see :data:`STYLES`)."""

    path: Path
    family: str
    styles: frozenset[str]

    @property
    def name(self) -> str:
        return self.path.name


def _has(name: str, hints: Iterable[str]) -> bool:
    return any(h in name for h in hints)


def classify_style(filename: str) -> frozenset[str]:
    """Style tags for a font file name, e.g. ``"LiberationSerif-BoldItalic.ttf"`` -> {serif, bold, italic}.

    Names are the only signal that needs no font parsing; the hints above cover the Debian font packages we
    use. A font that is neither serif, mono nor symbol counts as sans.
    """
    name = filename.lower()
    tags: set[str] = set()
    if _has(name, _SYMBOL):
        tags.add("symbol")
    if _has(name, _MONO):
        tags.add("mono")
    if _has(name, _TYPEWRITER):
        tags.add("typewriter")
    if "sans" not in name and _has(name, _SERIF):
        tags.add("serif")
    if not tags & {"serif", "mono", "symbol"}:
        tags.add("sans")
    if _has(name, _HANDWRITING):
        tags.add("handwriting")
    if _has(name, _CONDENSED):
        tags.add("condensed")
    if _has(name, _BOLD) and "semicondensed" not in name.replace("semibold", ""):
        tags.add("bold")
    if _has(name, _ITALIC):
        tags.add("italic")
    if _has(name, _LIGHT):
        tags.add("light")
    return frozenset(tags)


def _family(filename: str) -> str:
    """Family name: the file stem before the first ``-``/``_`` or style word (``"LiberationSans"``)."""
    stem = Path(filename).stem
    stem = re.split(r"[-_]", stem, maxsplit=1)[0]
    stem = re.sub(r"(?i)\s+(b|i|bi|bold|italic|regular)$", "", stem)
    return stem.strip()


def discover_fonts(dirs: Sequence[str | Path] = (), *, include_system: bool = True,
                   exclude_symbol: bool = True) -> list[FontInfo]:
    """All ``.ttf``/``.otf`` files under ``dirs`` (recursively) and, optionally, the system font dirs.

    Args:
        dirs: folders to search first; missing folders are skipped.
        include_system: also search :data:`SYSTEM_FONT_DIRS`.
        exclude_symbol: drop math/symbol/dingbat fonts, which cannot render words.

    Returns:
        FontInfo records sorted by file name (then path); a file name seen twice is kept once (first dir wins).
    """
    roots = [Path(d) for d in dirs] + (list(SYSTEM_FONT_DIRS) if include_system else [])
    seen: dict[str, FontInfo] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() not in _EXTENSIONS or not path.is_file() or path.name in seen:
                continue
            info = FontInfo(path=path, family=_family(path.name), styles=classify_style(path.name))
            if exclude_symbol and "symbol" in info.styles:
                continue
            seen[path.name] = info
    return sorted(seen.values(), key=lambda f: (f.name, str(f.path)))


def filter_fonts(fonts: Sequence[FontInfo], *, require: Iterable[str] = (),
                 forbid: Iterable[str] = ()) -> list[FontInfo]:
    """Fonts having every tag in ``require`` and none in ``forbid`` (order kept)."""
    req, forb = frozenset(require), frozenset(forbid)
    return [f for f in fonts if req <= f.styles and not (forb & f.styles)]


def font_covers(path: str | Path, chars: str) -> str:
    """The subset of ``chars`` the font has glyphs for (reads its cmap with fontTools).

    Renderers use it to avoid drawing tofu boxes for characters a font lacks (e.g. ``€`` or ``ő``).
    """
    from fontTools.ttLib import TTFont  # lazy: only renderers need it

    with TTFont(str(path), lazy=True, fontNumber=0) as font:
        cmap = font.getBestCmap() or {}
    return "".join(c for c in chars if ord(c) in cmap)


def subset_fonts(fonts: Sequence[FontInfo], out_dir: str | Path, chars: str, *,
                 require: str = string.ascii_letters + string.digits,
                 per_family: int | None = None) -> list[Path]:
    """Write copies of ``fonts`` reduced to the glyphs of ``chars`` (kerning kept) into ``out_dir``.

    A subset font is 5-20x smaller, so a few hundred fonts fit in the few MB carried to the GPU machine.
    File names are kept (style classification reads them).

    Args:
        fonts: candidates (e.g. :func:`discover_fonts` over unpacked Debian font packages).
        out_dir: destination folder.
        chars: the glyphs to keep (the recognition vocabulary).
        require: characters every kept font must draw. Packages such as ``fonts-noto-core`` hold many
            fonts of other scripts that draw only digits or punctuation of ``chars``; the renderer would
            pick them for every text they cover, skewing digits toward those shapes.
        per_family: keep at most this many files of one family (evenly spaced in name order), so that a
            family shipped in dozens of widths and weights does not dominate the per-file font draw.
    """
    from fontTools import subset  # lazy: only carry preparation needs it

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    options = subset.Options()
    options.layout_features = ["kern", "liga", "clig", "calt"]
    options.name_IDs = [1, 2]
    options.notdef_outline = True
    kept = [f for f in fonts if not set(require) - set(font_covers(f.path, require))]
    if per_family is not None:
        families: dict[str, list[FontInfo]] = {}
        for f in kept:
            families.setdefault(f.family, []).append(f)
        chosen = {f.path for group in families.values() for f in group[::-(-len(group) // per_family)]}
        kept = [f for f in kept if f.path in chosen]
    written = []
    for info in kept:
        covered = font_covers(info.path, chars)
        if not covered:
            continue
        font = subset.load_font(str(info.path), options)
        sub = subset.Subsetter(options)
        sub.populate(unicodes=[ord(c) for c in covered])
        sub.subset(font)
        target = out / info.path.name
        subset.save_font(font, str(target), options)
        written.append(target)
    return written
