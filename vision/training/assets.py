"""The training bank from Debian packages in one command: fonts, word lists and photographs.

    python -m vision.training.assets .carry/reco [--cache .cache] [--detection .carry/det]

Every generator of the recognizer and the detector draws from one folder of three parts, which a GPU call
carries (about 17 MB): ``fonts/`` (the font packages of :data:`FONT_PACKAGES`, subset to the recognizer's
vocabulary, at most 6 files a family), ``words/`` (one compressed list a language: the ``w*`` word lists and
the hunspell dictionaries of :data:`HUNSPELL`, expanded with ``unmunch``) and ``photos/`` (the wallpaper
photographs, downscaled, every 8th held out in ``photos/holdout/``). The packages are fetched with ``apt-get
download`` (no root, nothing installed) into ``CACHE/debs`` and unpacked with ``dpkg -x`` into ``CACHE/x``
and ``CACHE/wall``; a package already downloaded is not fetched again. Sources and licences:
``docs/models/recognition.md`` (*Sources and licences*). ``--detection DIR`` also makes the detector's carried
assets (:func:`vision.training.detection_data.prepare_assets`: 700 pages rendered from the PDFs of
:data:`PDF_PACKAGES` with their word boxes, page fonts and word lists; ``docs/models/detection.md``).
"""

from __future__ import annotations

import argparse
import os
import string
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["FONT_PACKAGES", "HUNSPELL", "PDF_PACKAGES", "PHOTO_PACKAGES", "WORD_LISTS", "build_bank",
           "expand_hunspell", "fetch"]

FONT_PACKAGES = (
    "fonts-dejavu-core", "fonts-dejavu-extra", "fonts-liberation", "fonts-liberation2", "fonts-urw-base35",
    "fonts-freefont-ttf", "fonts-crosextra-carlito", "fonts-crosextra-caladea", "fonts-croscore",
    "fonts-linuxlibertine", "fonts-ebgaramond", "fonts-roboto-unhinted", "fonts-open-sans", "fonts-lato",
    "fonts-inconsolata", "fonts-hack", "fonts-courier-prime", "fonts-firacode", "fonts-jetbrains-mono",
    "fonts-comic-neue", "fonts-cantarell", "fonts-stix", "fonts-texgyre", "fonts-junicode", "fonts-sil-charis",
    "fonts-sil-gentium", "fonts-oxygen", "fonts-agave", "fonts-mononoki", "fonts-anonymous-pro",
    "fonts-quattrocento", "fonts-noto-core", "fonts-noto-mono", "fonts-go", "fonts-cabin", "fonts-league-mono",
    "fonts-font-awesome",
)
WORD_LISTS = {  # package: (file under /usr/share/dict, list name)
    "wamerican": ("american-english", "american-english"), "wbritish": ("british-english", "british-english"),
    "wfrench": ("french", "french"), "wspanish": ("spanish", "spanish"), "witalian": ("italian", "italian"),
    "wdutch": ("dutch", "dutch"), "wdanish": ("danish", "danish"), "wnorwegian": ("bokmaal", "bokmaal"),
    "wpolish": ("polish", "polish"), "wportuguese": ("portuguese", "portuguese"),
    "wswedish": ("swedish", "swedish"), "wngerman": ("ngerman", "german"),
}
HUNSPELL = {"cs_CZ": "czech", "sk_SK": "slovak", "hu_HU": "hungarian", "ro_RO": "romanian", "sl_SI": "slovenian",
            "hr_HR": "croatian"}
PDF_PACKAGES = ("texlive-publishers-doc", "texlive-latex-base-doc", "texlive-science-doc")
PHOTO_PACKAGES = ("gnome-backgrounds", "plasma-workspace-wallpapers", "mate-backgrounds", "ukui-wallpapers",
                  "desktop-base")


def fetch(packages: Sequence[str], debs: Path, unpack: Path) -> None:
    """``apt-get download`` each package not yet in ``debs`` and ``dpkg -x`` it into ``unpack`` (or into
    ``unpack/PACKAGE`` for the photo packages, which :func:`prepare_photos` reads one folder each). A package
    unpacked there before (a stamp named after its .deb in ``DEST/.unpacked``) is not unpacked again."""
    debs.mkdir(parents=True, exist_ok=True)
    for package in packages:
        if not list(debs.glob(f"{package}_*.deb")):
            subprocess.run(["apt-get", "download", package], cwd=debs, check=True, capture_output=True)
        (deb,) = sorted(debs.glob(f"{package}_*.deb"))[-1:]
        dest = unpack / package if package in PHOTO_PACKAGES else unpack
        stamp = dest / ".unpacked" / deb.name
        if stamp.exists():
            continue
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg", "-x", str(deb), str(dest)], check=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.touch()


def expand_hunspell(root: Path, dict_dir: Path) -> list[Path]:
    """Every affix-expanded word of the :data:`HUNSPELL` dictionaries unpacked under ``root`` (``unmunch``
    from hunspell-tools, unpacked there too), one UTF-8 file a language in ``dict_dir``."""
    hunspell, unmunch = root / "usr/share/hunspell", root / "usr/bin/unmunch"
    env = {**os.environ, "LD_LIBRARY_PATH": str(root / "usr/lib/x86_64-linux-gnu")}
    written = []
    for code, name in HUNSPELL.items():
        dic, aff = hunspell / f"{code}.dic", hunspell / f"{code}.aff"
        if not dic.is_file():
            continue
        encoding = next((line.split()[1] for line in aff.read_text("latin-1").splitlines()
                         if line.startswith("SET ")), "UTF-8")
        raw = subprocess.run([str(unmunch), str(dic), str(aff)], capture_output=True, env=env, timeout=600).stdout
        out = dict_dir / name
        out.write_text(raw.decode(encoding, errors="ignore"), encoding="utf-8")
        written.append(out)
    return written


def build_bank(unpacked: Path, walls: Path, out: Path, *, max_per_list: int = 50_000) -> dict[str, int]:
    """The bank in ``out`` (``fonts/``, ``words/``, ``photos/``) from unpacked packages; returns the counts."""
    from vision.models.recognition.vocab import VOCAB
    from vision.training.synth.corpus import prepare_word_lists
    from vision.training.synth.fonts import discover_fonts, subset_fonts
    from vision.training.synth.photos import prepare_photos

    dict_dir = unpacked.parent / "dict"
    dict_dir.mkdir(parents=True, exist_ok=True)
    for path, name in WORD_LISTS.values():
        src = unpacked / "usr/share/dict" / path
        if src.exists():
            (dict_dir / name).write_bytes(src.read_bytes())
    expand_hunspell(unpacked, dict_dir)
    fonts = subset_fonts(discover_fonts([unpacked / "usr/share/fonts"], include_system=False), out / "fonts", VOCAB,
                         require=string.ascii_letters + string.digits + ".,:;-$%/()", per_family=6)
    lists = prepare_word_lists(dict_dir, out / "words", max_per_list=max_per_list)
    photos = prepare_photos(walls, out / "photos") if walls.is_dir() else {"train": [], "holdout": []}
    return {"fonts": len(fonts), "words": lists, "photos": len(photos["train"]),
            "holdout": len(photos["holdout"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.training.assets", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the bank folder (e.g. .carry/reco)")
    parser.add_argument("--cache", type=Path, default=Path(".cache"), help="downloads and unpacked packages")
    parser.add_argument("--no-photos", action="store_true", help="fonts and word lists only")
    parser.add_argument("--detection", type=Path, default=None,
                        help="also the detector's carried assets (rendered PDF pages, fonts, words) in this folder")
    args = parser.parse_args(argv)
    fetch([*FONT_PACKAGES, *WORD_LISTS, *(f"hunspell-{c[:2].lower()}" for c in HUNSPELL), "hunspell-tools"],
          args.cache / "debs", args.cache / "x")
    if not args.no_photos:
        fetch(PHOTO_PACKAGES, args.cache / "debs", args.cache / "wall")
    counts = build_bank(args.cache / "x", args.cache / "wall", args.out)
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    if args.detection is not None:
        from vision.training.detection_data import prepare_assets

        fetch(PDF_PACKAGES, args.cache / "debs", args.cache / "pdfs")
        det = prepare_assets(str(args.cache / "pdfs"), str(args.cache / "x/usr/share/fonts"),
                             str(args.cache / "dict"), str(args.detection))
        print("detection: " + ", ".join(f"{k} {v}" for k, v in det.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
