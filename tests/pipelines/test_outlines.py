"""Word outlines (``OCROptions.outlines``): from the detector's regions to ``Word.outline`` and the JSON format,
mapped to the page as given like every other geometry."""

from __future__ import annotations

import json

import numpy as np
from _ocr_stages import InkDetector, TemplateReader, render_page

from vision.export.json import dumps, loads
from vision.pipelines.ocr.options import options_with
from vision.pipelines.ocr.orientation import rotate_image
from vision.pipelines.ocr.predictor import OCRPredictor, build_pipeline


class OutlineDetector(InkDetector):
    """The ink detector with an outline per word: its quad with a point added at the middle of the bottom
    edge, pushed down a little (as a word on a smile-shaped baseline would be)."""

    outlines = False

    def __call__(self, pages: list[np.ndarray]) -> list:
        out = super().__call__(pages)
        for det in out:
            shapes = []
            for q in det.polygons.astype(np.float64):
                bottom = (q[2] + q[3]) / 2 + [0.0, 0.002]
                shapes.append(np.vstack([q[:3], bottom, q[3:]]).astype(np.float32))
            det.outlines = shapes if self.outlines else None
        return out


def _words(doc) -> list:
    return [w for b in doc.pages[0].blocks for line in b.lines for w in line.words]


def _ocr(**options) -> OCRPredictor:
    o = options_with(device="cpu", photo="off", **options)
    detector = OutlineDetector()
    detector.outlines = o.outlines  # as `ocr_predictor` builds its detector
    return OCRPredictor(build_pipeline(o, detector, TemplateReader()), o)


def test_words_carry_their_outline_into_json_and_back() -> None:
    image, truth = render_page()
    doc = _ocr(outlines=True)([image])
    words = [w for b in doc.pages[0].blocks for line in b.lines for w in line.words]
    assert [w.value for w in words] == [t for t, _ in truth]
    for w in words:
        assert w.outline is not None and len(w.outline) == 5
        x0, y0, x1, y1 = w.geometry
        xs, ys = [p[0] for p in w.outline], [p[1] for p in w.outline]
        assert min(xs) >= x0 - 1e-6 and max(xs) <= x1 + 1e-6 and min(ys) >= y0 - 1e-6
    text = dumps(doc)
    first = json.loads(text)["pages"][0]["blocks"][0]["lines"][0]["words"][0]
    assert len(first["outline"]) == 5
    assert [w.outline for w in _words(loads(text))] == [w.outline for w in words]


def test_no_outlines_unless_asked() -> None:
    image, _ = render_page()
    doc = _ocr()([image])
    words = [w for b in doc.pages[0].blocks for line in b.lines for w in line.words]
    assert words and all(w.outline is None for w in words)
    assert '"outline"' not in dumps(doc)


def test_outlines_follow_the_page_turned_upright() -> None:
    """On a page read turned (orientation), outlines come back on the page as given, as boxes do."""
    image, _ = render_page()
    turned = rotate_image(image, 270)
    doc = _ocr(outlines=True, detect_orientation=True)([turned])
    page = doc.pages[0]
    assert page.orientation == 90
    for w in (w for b in page.blocks for line in b.lines for w in line.words):
        x0, y0, x1, y1 = w.geometry
        xs, ys = [p[0] for p in w.outline], [p[1] for p in w.outline]
        assert abs(min(xs) - x0) < 0.01 and abs(max(xs) - x1) < 0.01
        assert abs(min(ys) - y0) < 0.01 and abs(max(ys) - y1) < 0.01 + 0.003


def _arc_page() -> np.ndarray:
    """A white page with a word's letters set along an arc, as on a stamp or a bottle label."""
    from PIL import Image, ImageDraw, ImageFont

    from _ocr_stages import FONT

    page = Image.new("RGB", (640, 420), "white")
    font = ImageFont.truetype(FONT, 44)
    for k, ch in enumerate("CURVEDLETTERS"):
        degrees = 216 + 9 * k  # along the top of a circle of radius 200, 9 degrees a letter
        glyph = Image.new("L", (70, 70), 0)
        ImageDraw.Draw(glyph).text((20, 5), ch, font=font, fill=255)
        glyph = glyph.rotate(270 - degrees, resample=Image.BICUBIC)  # each letter upright on the arc
        x = 320 + 200 * np.cos(np.deg2rad(degrees)) - 35
        y = 330 + 200 * np.sin(np.deg2rad(degrees)) - 35
        page.paste((0, 0, 0), (int(x), int(y)), glyph)
    return np.ascontiguousarray(np.asarray(page))


def test_cli_outlines_with_the_shipped_detector(tmp_path, capsys) -> None:
    """``vision ocr --outlines -f json``: the shipped detector's words on an arc get outlines of more than
    four points that cover less than their boxes do; without the flag, no outline."""
    import cv2

    from vision.app.cli import main
    from vision.structures.geometry import box_to_polygon

    path = tmp_path / "arc.png"
    cv2.imwrite(str(path), _arc_page()[:, :, ::-1])
    assert main(["ocr", str(path), "-f", "json", "--outlines", "--device", "cpu", "--photo", "off"]) == 0
    words = [w for b in json.loads(capsys.readouterr().out)["pages"][0]["blocks"] for ln in b["lines"]
             for w in ln["words"]]
    assert words and all("outline" in w or " " in w["value"] for w in words)
    curved = [w for w in words if "outline" in w and len(w["outline"]) > 4]
    assert curved

    def area(points) -> float:
        p = np.asarray(points, np.float64) * [640, 420]
        return float(abs(np.dot(p[:, 0], np.roll(p[:, 1], -1)) - np.dot(p[:, 1], np.roll(p[:, 0], -1))) / 2)

    assert sum(area(w["outline"]) for w in curved) < 0.8 * sum(area(box_to_polygon(w["geometry"])) for w in curved)
    assert main(["ocr", str(path), "-f", "json", "--device", "cpu", "--photo", "off"]) == 0
    assert '"outline"' not in capsys.readouterr().out


def test_outlines_per_call() -> None:
    """``with_options(outlines=True)`` (the REST API's ``outlines``) shares the models and adds outlines."""
    image, _ = render_page()
    base = _ocr()
    on = base.with_options(outlines=True)
    assert on.pipeline["recognize"].predictor is base.pipeline["recognize"].predictor
    assert all(w.outline is not None for w in _words(on([image])))
    assert all(w.outline is None for w in _words(base([image])))


def test_curved_words_are_read_again_unbent() -> None:
    """With outlines, the ``curved`` stage reads a word on an arc again unbent and keeps the surer reading:
    the shipped models read the rendered arc word from its box as something else, unbent as it is."""
    from vision import ocr_predictor

    page = _arc_page()
    plain = ocr_predictor(device="cpu", photo="off")
    curved = ocr_predictor(device="cpu", photo="off", outlines=True)
    assert "curved" in curved.pipeline.names and "curved" not in plain.pipeline.names
    assert "CURVEDLETTERS" not in [w.value for w in plain([page]).pages[0].words]
    assert "CURVEDLETTERS" in [w.value for w in curved([page]).pages[0].words]
    assert curved.pipeline["curved"].changed >= 1
    from vision.pipelines.ocr.bulk import split_pipeline

    model, _ = split_pipeline(curved.pipeline)
    assert model.names[-1] == "curved"  # the bulk engine keeps it with the models
