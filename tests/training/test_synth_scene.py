"""Scene, overlay and receipt generators, the generator mix, the photo bank and the multilingual sampler."""

from __future__ import annotations

import json
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.models.recognition.vocab import normalize_text
from vision.predictors.recognition.preprocess import HEIGHT
from vision.training.synth.corpus import COMMON_FOREIGN, Corpus, TextSampler
from vision.training.synth.fonts import discover_fonts
from vision.training.synth.mix import GENERATORS, build_mix
from vision.training.synth.photos import PhotoBank, prepare_photos

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two fake wallpaper packages unpacked as ``dpkg -x`` leaves them; curated into a photo folder."""
    src = tmp_path_factory.mktemp("unpacked")
    rng = np.random.default_rng(0)
    for pkg, names in (("mate-backgrounds", ["a", "b", "c"]), ("plasma-workspace-wallpapers", ["Kite"])):
        for name in names:
            folder = src / pkg / ("usr/share/wallpapers/" + name + "/contents/images" if "plasma" in pkg
                                  else "usr/share/backgrounds/mate/nature")
            folder.mkdir(parents=True, exist_ok=True)
            img = cv2.resize(rng.integers(0, 255, (12, 16, 3), dtype=np.uint8), (800, 600))
            cv2.imwrite(str(folder / (f"{name}.jpg" if "mate" in pkg else "800x600.jpg")), img)
    cv2.imwrite(str(src / "mate-backgrounds/usr/share/backgrounds/mate/nature/flat.png"),
                np.full((700, 900, 3), 200, np.uint8))  # a flat (transparent) image: dropped
    dst = tmp_path_factory.mktemp("photos")
    split = prepare_photos(src, dst, max_side=320, holdout_every=4)
    assert len(split["train"]) == 3 and len(split["holdout"]) == 1
    records = json.loads((dst / "photos.json").read_text())
    assert {r["package"] for r in records} == {"mate-backgrounds", "plasma-workspace-wallpapers"}
    assert all(r["license"].startswith("GPL-2+") for r in records)
    return dst


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus({"english": ["apple", "OPEN", "Exit", "station"], "german": ["Straße", "über", "Größe"],
                   "czech": ["přílišný", "žluťoučký"]})


def test_photo_bank_patches(photos: Path) -> None:
    bank = PhotoBank(photos)
    assert len(bank) == 3  # the held-out photo is not used
    rng = np.random.default_rng(0)
    patch = bank.patch(30, 90, rng)
    assert patch.shape == (30, 90, 3) and patch.dtype == np.uint8
    empty = PhotoBank(None)  # no photos: synthetic textures
    assert empty.patch(10, 20, rng).shape == (10, 20, 3)


@pytest.mark.parametrize("name", ["scene", "overlay", "receipt", "multilingual"])
def test_generators_are_deterministic_and_sized(name: str, photos: Path, corpus: Corpus) -> None:
    fonts = discover_fonts([DEJAVU], include_system=False)
    gen = build_mix(fonts, corpus, {name: 1.0}, max_width=192, photos=str(photos))
    a = [gen(np.random.default_rng([7, i])) for i in range(12)]
    b = [gen(np.random.default_rng([7, i])) for i in range(12)]
    for (img, text), (img2, text2) in zip(a, b):
        assert text == text2 and np.array_equal(img, img2)
        assert img.dtype == np.uint8 and img.shape[0] == HEIGHT and img.shape[2] == 3 and 8 <= img.shape[1] <= 192
        assert text and normalize_text(text) == text
    t0, n = time.perf_counter(), 30
    rng = np.random.default_rng(1)
    for _ in range(n):
        gen(rng)
    print(f"{name}: {n / (time.perf_counter() - t0):.0f} samples/s on one core of this machine (cold glyphs)")


def test_squeezed_scene_lettering_is_narrower_and_off_by_default(photos: Path, corpus: Corpus) -> None:
    """``p_squeeze`` narrows the letters (tall signage lettering), so the same texts give narrower crops; at its
    default 0 it draws nothing, so the recipes before it keep their random streams."""
    fonts = discover_fonts([DEJAVU], include_system=False)

    def crops(overrides: dict) -> list[tuple[np.ndarray, str]]:
        gen = build_mix(fonts, corpus, {"scene": 1.0}, max_width=192, photos=str(photos),
                        overrides={"scene": overrides} if overrides else None)
        return [gen(np.random.default_rng([9, i])) for i in range(40)]

    plain, off, narrow = crops({}), crops({"p_squeeze": 0.0}), crops({"p_squeeze": 1.0})
    assert all(a[1] == b[1] and np.array_equal(a[0], b[0]) for a, b in zip(plain, off))
    per_char = [np.mean([img.shape[1] / max(len(text), 1) for img, text in run]) for run in (plain, narrow)]
    assert per_char[1] < 0.85 * per_char[0], per_char


def test_mix_draws_every_generator_and_shares_glyphs(photos: Path, corpus: Corpus) -> None:
    fonts = discover_fonts([DEJAVU], include_system=False)
    gen = build_mix(fonts, corpus, {g: 1.0 for g in GENERATORS}, max_width=192, photos=str(photos))
    assert gen.names == list(GENERATORS)
    assert all(getattr(p, "glyphs", None) is gen.glyphs or p.fonts.glyphs is gen.glyphs for p in gen.parts)
    with pytest.raises(ValueError, match="unknown generators"):
        build_mix(fonts, corpus, {"handwriting": 1.0}, max_width=192)


def test_multilingual_sampler_draws_foreign_words(corpus: Corpus) -> None:
    rng = np.random.default_rng(0)
    plain = TextSampler(corpus)
    multi = TextSampler(corpus, foreign=0.9, weights={"word": 1.0, "common": 0, "form": 0, "number": 0,
                                                         "date": 0, "money": 0, "code": 0, "email_url": 0,
                                                         "punct": 0, "phrase": 0, "random": 0, "char": 0,
                                                         "checkbox": 0})
    foreign = {w for ws in corpus.foreign.values() for w in ws} | set(COMMON_FOREIGN)

    def share(sampler: TextSampler) -> float:
        texts = [sampler(rng) for _ in range(400)]
        return sum(any(w.lower().strip(":.,;)(\"'-/%?!*”’“‘«#$[") in {f.lower() for f in foreign}
                       for w in t.split()) for t in texts) / len(texts)

    assert share(multi) > 0.7 and share(plain) < 0.2
