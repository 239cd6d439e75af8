"""Light-on-dark pages are inverted before the models; ordinary pages are left alone."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.io.page import PageImage
from vision.pipelines.base import PageState
from vision.pipelines.ocr.polarity import PolarityStage, is_dark


def _page(background: int, ink: int) -> np.ndarray:
    img = Image.new("RGB", (400, 200), (background,) * 3)
    font = ImageFont.load_default(size=28)
    ImageDraw.Draw(img).text((20, 80), "HELLO WORLD 42", fill=(ink,) * 3, font=font)
    return np.asarray(img)


def test_is_dark_follows_the_background_not_the_ink() -> None:
    assert is_dark(_page(30, 240))
    assert not is_dark(_page(240, 20))
    assert not is_dark(_page(150, 20))  # grey paper
    gradient = np.broadcast_to(np.linspace(20, 90, 640, dtype=np.uint8)[None, :, None], (360, 640, 3))
    assert is_dark(np.ascontiguousarray(gradient))


def test_stage_inverts_only_dark_pages() -> None:
    dark, light = _page(30, 240), _page(240, 20)
    states = [PageState(page=PageImage(image=a, source="<array>", index=i, original_size=a.shape[:2]), image=a) for i, a in enumerate((dark, light))]
    out = PolarityStage()(states)
    np.testing.assert_array_equal(out[0].image, 255 - dark)
    assert out[1].image is light
    np.testing.assert_array_equal(out[0].page.image, dark)  # the page as read keeps its pixels
