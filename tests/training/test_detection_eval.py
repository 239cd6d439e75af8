"""``score_pages``: the shipped detector scored on a rendered page whose word boxes are known."""

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.models import get_model
from vision.ops.db_postprocess import DBOptions
from vision.training.detection_eval import score_pages

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _page() -> tuple[np.ndarray, np.ndarray]:
    font = ImageFont.truetype(FONT, 30)
    page = Image.new("RGB", (1000, 400), "white")
    draw = ImageDraw.Draw(page)
    boxes = []
    for row, line in enumerate(["Invoice number 12345", "Total due 250.00 EUR", "Thank you"]):
        x = 60
        for word in line.split():
            boxes.append(draw.textbbox((x, 80 + 100 * row), word, font=font))
            draw.text((x, 80 + 100 * row), word, font=font, fill="black")
            x = boxes[-1][2] + font.getlength(" ")
    return np.asarray(page), np.asarray(boxes, np.float32)


def test_score_pages_counts_every_label_and_finds_clean_words() -> None:
    image, boxes = _page()
    model = get_model("db_mobilenet_v3_large")
    counts = score_pages(model, [(image, boxes)], DBOptions(unclip_ratio=0.5))
    assert counts.n_gt == len(boxes) == 9
    assert counts.tp >= 8 and counts.precision >= 0.8  # IoU 0.5 against tight ink boxes
    empty = score_pages(model, [(np.full_like(image, 255), np.zeros((0, 4), np.float32))], DBOptions())
    assert (empty.tp, empty.n_pred, empty.n_gt) == (0, 0, 0)
