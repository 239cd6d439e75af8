"""A small but awkward document shared by the exporter tests: two pages, markup characters, accents,
a rotated word, regions with masks, an empty line and block, and an unsorted, overlapping timeline."""

import numpy as np
import pytest

from vision.structures import Block, Document, Line, Page, Region, TimelineEntry, Word


def make_document() -> Document:
    """Build the shared sample (fresh objects on every call, so tests may mutate them)."""
    rng = np.random.default_rng(0)
    mask = np.zeros((120, 160), dtype=bool)
    mask[30:70, 40:100] = True
    page0 = Page(
        page_idx=0,
        dimensions=(120, 160),
        blocks=[
            Block(
                [
                    Line(
                        [
                            Word("Hello", 0.99, (0.05, 0.05, 0.30, 0.15)),
                            Word("<café>", 0.875, (0.35, 0.05, 0.62, 0.15)),
                            Word("a&b\"q'", 0.5, (0.66, 0.05, 0.95, 0.15)),
                        ]
                    ),
                    Line(
                        [
                            Word("Grüße", 1.0, (0.05, 0.20, 0.40, 0.30)),
                            Word("€42", 0.0, (0.45, 0.20, 0.70, 0.30)),
                        ]
                    ),
                ]
            ),
            Block([Line([])]),  # an empty line in an empty block: left out of text, hOCR and ALTO
            Block(
                [
                    Line(
                        [
                            Word("Ωμέγα", 0.7, (0.05, 0.50, 0.40, 0.62)),
                            Word(  # a rectangle turned 14 degrees on the 160 x 120 page
                                "tilted",
                                0.6,
                                (72 / 160, 56 / 120, 140 / 160, 88 / 120),
                                polygon=(
                                    (72 / 160, 72 / 120),
                                    (136 / 160, 56 / 120),
                                    (140 / 160, 72 / 120),
                                    (76 / 160, 88 / 120),
                                ),
                            ),
                        ]
                    )
                ]
            ),
        ],
        regions=[
            Region("figure", (0.25, 0.25, 0.625, 0.58), score=0.8, mask=mask),
            Region(
                "table", (0.1, 0.8, 0.9, 0.95), polygon=((0.1, 0.8), (0.9, 0.8), (0.9, 0.95), (0.1, 0.95))
            ),
        ],
        source="scan & co.png",
        image=rng.integers(0, 256, (120, 160, 3), dtype=np.uint8),
    )
    page1 = Page(
        page_idx=7,
        dimensions=(90, 200),
        blocks=[Block([Line([Word("frame", 0.1 + 0.2, (1 / 3, 0.1, 2 / 3, 0.4))])])],
        timestamp=3.5,
        source="clip.mp4",
    )
    timeline = [
        TimelineEntry("second", 2.0, 4.25, 0.9, (0.1, 0.1, 0.5, 0.2)),
        TimelineEntry("first <b>", 0.0, 2.5, 0.8, (0.1, 0.3, 0.5, 0.4)),
        TimelineEntry("same start", 2.0, 3.0, 0.7, (0.2, 0.3, 0.6, 0.4)),
        TimelineEntry("late\n\ntwo lines", 3661.0004, 3662.5, 0.95, (0.0, 0.0, 1.0, 1.0)),
    ]
    return Document(pages=[page0, page1], timeline=timeline, source="sample.pdf")


@pytest.fixture
def document() -> Document:
    return make_document()
