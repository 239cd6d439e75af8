"""``python -m vision.training.assets``: packages unpacked with dpkg (a package already in the cache is not
downloaded again) and a bank of fonts, word lists and photos the generators read."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np

from vision.training.assets import build_bank, fetch
from vision.training.synth.corpus import Corpus
from vision.training.synth.fonts import discover_fonts
from vision.training.synth.photos import PhotoBank

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


def test_fetch_unpacks_a_cached_package_without_downloading(tmp_path: Path) -> None:
    pkg = tmp_path / "src"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN/control").write_text("Package: wtiny\nVersion: 1.0\nArchitecture: all\n"
                                        "Maintainer: test <t@example.org>\nDescription: a word list\n")
    (pkg / "usr/share/dict").mkdir(parents=True)
    (pkg / "usr/share/dict/tiny").write_text("alpha\nbeta\n")
    debs = tmp_path / "debs"
    debs.mkdir()
    subprocess.run(["dpkg-deb", "--build", str(pkg), str(debs / "wtiny_1.0_all.deb")], check=True, capture_output=True)
    fetch(["wtiny"], debs, tmp_path / "x")  # in the cache: dpkg -x only, no apt-get
    assert (tmp_path / "x/usr/share/dict/tiny").read_text() == "alpha\nbeta\n"
    (tmp_path / "x/usr/share/dict/tiny").write_text("edited\n")
    fetch(["wtiny"], debs, tmp_path / "x")  # unpacked before: left as it is
    assert (tmp_path / "x/usr/share/dict/tiny").read_text() == "edited\n"


def test_bank_from_unpacked_packages(tmp_path: Path) -> None:
    x = tmp_path / "x"
    (x / "usr/share/fonts/truetype").mkdir(parents=True)
    for name in ("DejaVuSans.ttf", "DejaVuSerif-Bold.ttf"):
        shutil.copy(DEJAVU / name, x / "usr/share/fonts/truetype" / name)
    (x / "usr/share/dict").mkdir(parents=True)
    (x / "usr/share/dict/american-english").write_text("house\ngarden\nletter\nhouse's\n")
    (x / "usr/share/dict/french").write_text("maison\njardin\nlettre\nété\n")
    rng = np.random.default_rng(0)
    walls = tmp_path / "wall"
    for k in range(9):
        folder = walls / "gnome-backgrounds/usr/share/backgrounds/gnome"
        folder.mkdir(parents=True, exist_ok=True)
        photo = cv2.GaussianBlur(rng.integers(0, 255, (700, 900, 3), dtype=np.uint8), (0, 0), 3) * 3
        cv2.imwrite(str(folder / f"scene-{k}.jpg"), photo)
    out = tmp_path / "bank"
    counts = build_bank(x, walls, out)
    assert counts == {"fonts": 2, "words": 7, "photos": 8, "holdout": 1}
    assert len(discover_fonts([out / "fonts"], include_system=False)) == 2
    corpus = Corpus.from_dir(out / "words")
    assert sorted(corpus.english) == ["garden", "house", "letter"]  # possessives dropped
    assert sorted(corpus.foreign["french"]) == ["jardin", "lettre", "maison", "été"]
    assert PhotoBank(str(out / "photos")).patch(40, 60, rng).shape == (40, 60, 3)
