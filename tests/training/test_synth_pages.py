"""Synthetic pages, page degradations and PDF text-layer pages (fonts: DejaVu; PDFs: made with fpdf2)."""

from pathlib import Path

import numpy as np
import pytest

from vision.training.synth.fonts import discover_fonts
from vision.training.synth.page_degrade import PAGE_PROFILES, degrade_page, page_geometry, warp_page
from vision.training.synth.pages import (LAYOUT_WEIGHTS, LAYOUTS, SEPARATOR_GLYPHS, PageRenderer, carry_page_fonts,
                                        quantize_size, write_coverage)
from vision.training.synth.pdf_pages import (
    RenderedPages,
    build_page_set,
    extract_words,
    ink_check,
    render_page,
)

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
WORDS = ["Invoice", "TOTAL", "12.50", "Date:", "form", "of", "the", "Smith", "(555)", "ACME", "report"]


@pytest.fixture(scope="module")
def renderer() -> PageRenderer:
    fonts = discover_fonts([DEJAVU], include_system=False)
    assert fonts, "fonts-dejavu-core is required (make setup installs it)"
    return PageRenderer(fonts, lambda rng: WORDS[int(rng.integers(len(WORDS)))])


def _receipt_with(renderer, option: str):
    """The same seed's receipt drawn plain and with ``option`` at 1; the option at 0 must draw the plain page."""
    fonts = discover_fonts([DEJAVU], include_system=False)
    plain = renderer(np.random.default_rng(5), "receipt")
    off = PageRenderer(fonts, renderer.words, **{option: 0.0})(np.random.default_rng(5), "receipt")
    assert np.array_equal(plain.image, off.image) and plain.texts == off.texts
    return plain, PageRenderer(fonts, renderer.words, **{option: 1.0})(np.random.default_rng(5), "receipt")


def test_receipts_with_lone_quantities(renderer):
    """``lone_quantities``: receipt item lines start with a quantity standing alone, a word box of its own at the
    left margin; at 0 (the default) the receipts are the pages drawn without the option."""
    plain, page = _receipt_with(renderer, "lone_quantities")
    margin = page.boxes[:, 0].min()
    lone = [t for t, b in zip(page.texts, page.boxes) if t.isdigit() and b[0] - margin < 2 and b[2] - b[0] < 40]
    assert len(lone) >= 5 and len(lone) > len([t for t in plain.texts if t.isdigit() and len(t) <= 2])
    gray = page.image.mean(axis=2)
    assert all((gray[int(y0):int(y1) + 1, int(x0):int(x1) + 1] < 160).any() for x0, y0, x1, y1 in page.boxes)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_draws_boxed_words_on_ink(renderer, layout):
    page = renderer(np.random.default_rng(1), layout)
    h, w = page.image.shape[:2]
    assert page.image.dtype == np.uint8 and page.image.shape[2] == 3
    assert len(page.boxes) == len(page.texts) > 5
    assert page.boxes.dtype == np.float32
    assert np.all(page.boxes[:, 2] > page.boxes[:, 0]) and np.all(page.boxes[:, 3] > page.boxes[:, 1])
    assert (
        page.boxes[:, 0].min() >= -1 and page.boxes[:, 2].max() <= w + 1 and page.boxes[:, 3].max() <= h + 1
    )
    gray = page.image.mean(axis=2)
    inked = [
        (gray[int(y0) : int(y1) + 1, int(x0) : int(x1) + 1] < 160).any() for x0, y0, x1, y1 in page.boxes
    ]
    assert np.mean(inked) > 0.97  # every labelled word has ink under it


def test_word_boxes_span_cap_to_descender_lines(renderer):
    """All words of one size on one line share top and bottom (the labelling convention)."""
    page = renderer(np.random.default_rng(3), "receipt")
    tops = np.round(page.boxes[:, 1])
    rows = {}
    for top, box in zip(tops, page.boxes):
        rows.setdefault(top, []).append(box[3] - box[1])
    assert any(len(v) >= 2 and np.ptp(v) <= 1 for v in rows.values())


def test_quantize_size_picks_nearest_step():
    assert quantize_size(12.2) == 12 and quantize_size(95) in (90, 100) and quantize_size(1) == 6


def test_carry_page_fonts_keeps_vocabulary_glyphs(tmp_path):
    n = carry_page_fonts(DEJAVU, tmp_path, per_family=1)
    families = {f.family for f in discover_fonts([DEJAVU], include_system=False)}
    assert (
        n == len(families)
        and (tmp_path / "DejaVuSans.ttf").stat().st_size < (DEJAVU / "DejaVuSans.ttf").stat().st_size
    )
    assert (tmp_path / "coverage.json").is_file()


def test_coverage_file_round_trip(tmp_path):
    font = discover_fonts([DEJAVU], include_system=False)[0]
    (tmp_path / font.name).write_bytes(font.path.read_bytes())
    assert write_coverage(tmp_path) == 1
    assert "A" in (tmp_path / "coverage.json").read_text()


@pytest.mark.parametrize("profile", sorted(PAGE_PROFILES))
def test_page_degradations_keep_shape(profile):
    rng = np.random.default_rng(0)
    page = np.full((300, 200, 3), 255, np.uint8)
    page[100:120, 20:180] = 0
    matrix, out_shape = page_geometry(page.shape, rng, profile)
    assert matrix.shape == (3, 3)
    warped = warp_page(page, matrix, out_shape, rng, photo=profile == "photo")
    assert warped.shape[:2] == out_shape
    out = degrade_page(warped, rng, profile)
    assert out.shape == warped.shape and out.dtype == np.uint8
    if profile == "photo":
        assert out_shape[0] >= 300 and out_shape[1] >= 200


@pytest.fixture(scope="module")
def sample_pdf(tmp_path_factory, text_pdf) -> Path:
    return text_pdf(tmp_path_factory.mktemp("pdf") / "sample.pdf", pages=2, lines=25, size=14, top=100,
                          step=22, text="Line {line} of page {page}: quick brown foxes jump")


def test_extract_words_match_the_text_layer_and_the_ink(sample_pdf):
    import pypdfium2 as pdfium

    page = pdfium.PdfDocument(str(sample_pdf))[0]
    words = extract_words(page)
    assert [w.text for w in words[:6]] == ["Line", "0", "of", "page", "0:", "quick"]
    assert all(w.straight for w in words)
    first = words[0].box
    assert first[0] == pytest.approx(72, abs=1.5)
    assert first[3] - first[1] == pytest.approx((0.70 + 0.21) * 14, abs=1.5)  # cap line to descender line
    scale = 1.5
    image = render_page(page, scale)
    boxes = np.asarray([w.box for w in words]) * scale
    empty, stray = ink_check(image, boxes)
    assert empty == 0 and stray == 0
    moved = boxes + np.array([0, 300, 0, 300])  # a text layer that disagrees with the ink
    assert ink_check(image, moved)[0] > 0.1


def test_build_page_set_round_trip(sample_pdf, tmp_path):
    kept = build_page_set([sample_pdf], tmp_path, max_pages=2, per_file=2, min_words=20)
    assert kept == 2
    pages = RenderedPages(tmp_path)
    image, boxes, texts = pages.page(0)
    assert image.ndim == 3 and image.shape[2] == 3 and len(boxes) == len(texts) > 100
    assert boxes[:, 2].max() < image.shape[1] and boxes[:, 3].max() < image.shape[0]


def test_layout_weights(renderer):
    """``layouts`` reweights the layouts drawn: missing ones keep the defaults, a zero weight never draws one,
    and unknown names or weights that sum to nothing are refused."""
    fonts = discover_fonts([DEJAVU], include_system=False)
    words = renderer.words
    assert np.allclose(PageRenderer(fonts, words, layouts={}).layout_p, renderer.layout_p)
    only = PageRenderer(fonts, words, layouts={k: 0.0 for k in LAYOUTS if k != "receipt"})
    assert only.layout_p[LAYOUTS.index("receipt")] == 1.0
    assert only(np.random.default_rng(3)).layout == "receipt"
    more = PageRenderer(fonts, words, layouts={"receipt": 1.0}).layout_p
    assert more[LAYOUTS.index("receipt")] == pytest.approx(1.0 / (1.0 + 1.0 - LAYOUT_WEIGHTS["receipt"]))
    with pytest.raises(ValueError, match="unknown layouts"):
        PageRenderer(fonts, words, layouts={"poster": 1.0})
    with pytest.raises(ValueError, match="non-negative"):
        PageRenderer(fonts, words, layouts=dict.fromkeys(LAYOUTS, 0.0))


def test_receipts_with_separator_rows(renderer):
    """``separator_rows``: receipt rules printed as a row of one repeated glyph across the receipt, with ink but
    no word box (receipt ground truths leave them out); at 0 (the default) the plain page is drawn."""
    from PIL import Image, ImageDraw

    from vision.training.synth.pages import _Canvas

    plain, page = _receipt_with(renderer, "separator_rows")
    assert page.texts and not any(set(t) <= set(SEPARATOR_GLYPHS) for t in page.texts)
    font = discover_fonts([DEJAVU], include_system=False)[0]
    for seed in range(8):
        image = Image.new("RGB", (400, 60), (255, 255, 255))
        c = _Canvas(image, ImageDraw.Draw(image))
        PageRenderer.separator(c, np.random.default_rng(seed), 20, 40, 380, font, 18, (0, 0, 0))
        ink = np.asarray(image).mean(axis=2) < 128
        cols = np.flatnonzero(ink.any(axis=0))
        assert not c.boxes and not c.texts  # unlabelled
        assert cols.min() < 40 and cols.max() > 350  # the row spans the receipt's width


def test_receipts_with_dash_prices(renderer):
    """``dash_prices``: receipt prices written as a whole amount and a dash standing alone ("500. —"), the dash a
    word box of its own with ink; at 0 (the default) the receipts are the pages drawn without the option."""
    plain, page = _receipt_with(renderer, "dash_prices")
    dashes = [i for i, t in enumerate(page.texts) if t in ("—", "–")]
    assert len(dashes) >= 5 and not any(t in ("—", "–") for t in plain.texts)
    for i in dashes:
        assert page.texts[i - 1].endswith(".") and page.texts[i - 1][:-1].isdigit()  # "500." before its dash
        x0, y0, x1, y1 = page.boxes[i]
        assert (page.image[int(y0):int(y1) + 1, int(x0):int(x1) + 1].mean(axis=2) < 160).any()


def test_letter_spaced_lines(renderer):
    """``letter_spacing``: layout lines drawn with space between their characters; each word stays one box
    that spans its ink, wider than the same word set solid, with the gap to the next word larger than the
    letters' own; at 0 (the default) the plain page is drawn."""
    from PIL import Image, ImageDraw

    from vision.training.synth.letter_spacing import tracked_length
    from vision.training.synth.pages import _Canvas

    plain, page = _receipt_with(renderer, "letter_spacing")
    assert page.texts and not np.array_equal(plain.image, page.image)
    font = discover_fonts([DEJAVU], include_system=False)[0]
    widths = []
    for tracking in (0.0, 8.0):
        image = Image.new("RGB", (700, 60), (255, 255, 255))
        c = _Canvas(image, ImageDraw.Draw(image))
        renderer.text_run(c, 10, 40, ["TOTAL", "12.50"], font, 20, (0, 0, 0), tracking=tracking)
        assert c.texts == ["TOTAL", "12.50"]
        ink = np.asarray(image).mean(axis=2) < 128
        for x0, y0, x1, y1 in c.boxes:  # the box holds its word's ink and ends where the ink ends
            cols = np.flatnonzero(ink[:, int(x0):int(np.ceil(x1)) + 1].any(axis=0))
            assert cols.size and cols.min() <= 4 and cols.max() >= (x1 - x0) - 4
        widths.append(c.boxes[0][2] - c.boxes[0][0])
        if tracking:
            letters = np.flatnonzero(ink[:, int(c.boxes[0][0]):int(c.boxes[0][2])].any(axis=0))
            letter_gap = np.diff(letters).max()
            assert c.boxes[1][0] - c.boxes[0][2] > letter_gap  # words stay apart
    assert widths[1] > widths[0] + 4 * 8 - 2  # four gaps of 8 px inside "TOTAL"
    from vision.training.synth.pages import _font

    f = _font(str(font.path), 20)
    assert tracked_length(f, "TOTAL", 0.0) == f.getlength("TOTAL")
    assert tracked_length(f, "TOTAL", 8.0) == pytest.approx(sum(f.getlength(ch) for ch in "TOTAL") + 32)
