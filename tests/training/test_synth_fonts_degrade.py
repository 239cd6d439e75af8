"""Font discovery/classification and image degradations (deterministic, shape-preserving)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.training.synth import degrade as D
from vision.training.synth.fonts import classify_style, discover_fonts, filter_fonts, font_covers

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@pytest.mark.parametrize(("name", "expected"), [
    ("LiberationSerif-BoldItalic.ttf", {"serif", "bold", "italic"}),
    ("DejaVuSansMono.ttf", {"mono"}),
    ("NimbusMonoPS-Regular.otf", {"mono", "typewriter"}),
    ("RobotoCondensed-Light.ttf", {"sans", "condensed", "light"}),
    ("OpenSans-Regular.ttf", {"sans"}),
    ("STIXSizeOneSym-Regular.otf", {"symbol", "serif"}),
])
def test_classify_style(name: str, expected: set[str]) -> None:
    assert classify_style(name) == expected


def test_discover_is_sorted_deduplicated_and_filters_symbols(tmp_path) -> None:
    fonts = discover_fonts([DEJAVU, DEJAVU], include_system=False)
    assert fonts, "fonts-dejavu-core must be installed"
    names = [f.name for f in fonts]
    assert names == sorted(names) and len(names) == len(set(names))
    (tmp_path / "MathSymbol.ttf").write_bytes((DEJAVU / "DejaVuSans.ttf").read_bytes())
    assert all(f.name != "MathSymbol.ttf" for f in discover_fonts([tmp_path], include_system=False))
    assert discover_fonts([tmp_path], include_system=False, exclude_symbol=False)[0].name == "MathSymbol.ttf"
    mono = filter_fonts(fonts, require=["mono"], forbid=["bold"])
    assert mono and all("mono" in f.styles and "bold" not in f.styles for f in mono)


def test_font_covers() -> None:
    assert font_covers(DEJAVU / "DejaVuSans.ttf", "Aé€ő中") == "Aé€ő"


def _page() -> np.ndarray:
    img = np.full((48, 160, 3), 250, np.uint8)
    img[15:30, 10:150:6] = 20  # stroke-like bars
    return img


OPS = [D.gaussian_blur, D.motion_blur, D.gaussian_noise, D.salt_pepper, D.jpeg, D.downscale_upscale,
       D.binarize, D.ink_bleed, D.contrast, D.illumination, D.on_background, D.perspective, D.rotate]


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("grey", [False, True])
def test_ops_keep_shape_and_are_deterministic(op, grey: bool) -> None:
    img = _page()[..., 0].copy() if grey else _page()
    a = op(img, np.random.default_rng(7))
    b = op(img, np.random.default_rng(7))
    assert a.shape == img.shape and a.dtype == np.uint8
    assert np.array_equal(a, b)


def test_binarize_is_two_level_and_bleed_grows_ink() -> None:
    rng = np.random.default_rng(0)
    assert set(np.unique(D.binarize(D.gaussian_noise(_page(), rng), rng))) <= {0, 255}
    thick = D.ink_bleed(_page(), np.random.default_rng(0), bleed_prob=1.0)
    assert (thick < 128).sum() > (_page() < 128).sum()


def test_rotation_matrix_moves_points_like_the_image() -> None:
    img = np.full((64, 64), 255, np.uint8)
    img[10, 50] = 0
    m = D.rotation_matrix(img.shape, np.random.default_rng(3), max_degrees=5)
    moved = D.warp(img, m, fill=255)
    x, y = D.transform_points(np.array([[50, 10]]), m)[0]
    assert moved[round(y) - 1:round(y) + 2, round(x) - 1:round(x) + 2].min() < 200


def test_degrade_profiles() -> None:
    for profile in D.PROFILES:
        out = D.degrade(_page(), np.random.default_rng(1), profile)
        assert out.shape == _page().shape
    with pytest.raises(ValueError):
        D.degrade(_page(), np.random.default_rng(1), "nope")


def test_subset_fonts_requires_coverage_and_caps_families(tmp_path: Path) -> None:
    """Fonts that cannot draw ``require`` are left out; ``per_family`` caps the files of one family; the
    written fonts keep exactly the requested glyphs they have."""
    from vision.training.synth.fonts import subset_fonts

    fonts = discover_fonts([DEJAVU], include_system=False)
    families = {f.family for f in fonts}
    assert len(fonts) > len(families)  # some family has several files (regular + bold at least)
    assert subset_fonts(fonts, tmp_path / "none", "abc", require="中") == []
    written = subset_fonts(fonts, tmp_path / "one", "abc", per_family=1)
    assert len(written) == len(families)
    assert {f.family for f in discover_fonts([tmp_path / "one"], include_system=False)} == families
    assert all(font_covers(p, "abcd") == "abc" for p in written)
