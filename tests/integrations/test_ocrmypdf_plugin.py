"""The OCRmyPDF engine plugin: its element tree, its selection rules, and a real ``ocrmypdf`` run on a scan
made here (our shipped models; OCRmyPDF's own PDF/A and output checks; the words found by pdfium)."""

import io
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import img2pdf
import pikepdf
import pluggy
import pytest
import pypdfium2 as pdfium
import tomllib
from ocrmypdf import pluginspec
from PIL import Image

sys.path.insert(0, str(Path(__file__).parents[1] / "pipelines"))
from _ocr_stages import TEXT, InkDetector, TemplateReader, render_page  # noqa: E402

from vision.integrations import ocrmypdf as plugin  # noqa: E402
from vision.structures import Block, Document, Line, Page, Word  # noqa: E402

ROOT = Path(__file__).parents[2]


def test_pages_become_element_trees_in_image_pixels():
    tilted = Word(
        "tilted", 0.5, (0.5, 0.4, 0.7, 0.6), polygon=((0.5, 0.5), (0.7, 0.4), (0.7, 0.5), (0.5, 0.6))
    )
    page = Page(
        0, (200, 400), blocks=[Block([Line([Word("flat", 0.9, (0.1, 0.1, 0.3, 0.2)), tilted])]), Block([])]
    )
    root = plugin.page_to_element(page, 150.0, 3)
    assert (root.ocr_class, root.page_number, root.dpi) == ("ocr_page", 3, 150.0)
    (paragraph,) = root.children  # the empty block is left out
    (line,) = paragraph.lines
    flat, rotated = line.words
    assert (flat.text, flat.confidence) == ("flat", 0.9)
    assert (flat.bbox.left, flat.bbox.top, flat.bbox.right, flat.bbox.bottom) == (40, 20, 120, 40)
    assert rotated.poly[1] == (280, 80)
    # top edge from (200, 100) to (280, 80) px: rising to the right, 14.04 degrees counter-clockwise
    assert abs(plugin._angle(tilted.polygon, 400, 200) - 14.036) < 1e-3


def test_the_entry_point_selects_vision_only_by_name_and_the_module_also_for_auto():
    pm = pluggy.PluginManager("ocrmypdf")
    pm.add_hookspecs(pluginspec)
    pm.register(plugin.EntryPoint, name="vision")  # what the installed entry point registers
    assert pm.hook.get_ocr_engine(options=SimpleNamespace(ocr_engine="auto")) is None
    assert isinstance(
        pm.hook.get_ocr_engine(options=SimpleNamespace(ocr_engine="vision")), plugin.VisionEngine
    )
    pm.register(plugin)  # --plugin vision.integrations.ocrmypdf, next to the entry point
    assert isinstance(pm.hook.get_ocr_engine(options=SimpleNamespace(ocr_engine="auto")), plugin.VisionEngine)
    assert pm.hook.get_ocr_engine(options=SimpleNamespace(ocr_engine="tesseract")) is None
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["ocrmypdf"]
    assert entry_points == {"vision": "vision.integrations.ocrmypdf:EntryPoint"}


def test_worker_threads_split_the_cores():
    cores = len(os.sched_getaffinity(0))
    assert plugin._threads(1) == cores and plugin._threads(cores) == 1 and plugin._threads(10 * cores) == 1


@pytest.mark.parametrize("renderer", ["auto", "sandwich", "hocr"])
def test_ocrmypdf_with_the_vision_engine_end_to_end(tmp_path, renderer):
    """Each of OCRmyPDF's renderers: ``auto`` (our element tree), ``sandwich`` (our text-only PDF page) and
    ``hocr`` (our hOCR)."""
    image, _ = render_page(TEXT, size=(1100, 850), font_size=40, line_height=60, left=80, top=120)
    png = io.BytesIO()
    Image.fromarray(image).convert("L").save(png, format="PNG", dpi=(100, 100))
    (tmp_path / "scan.pdf").write_bytes(img2pdf.convert(png.getvalue()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, "-m", "ocrmypdf", "--plugin", "vision.integrations.ocrmypdf", "--ocr-engine", "vision",
         "--pdf-renderer", renderer, "--jobs", "1", "scan.pdf", "out.pdf"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "PDF/A-2b" in run.stderr  # OCRmyPDF's own validation of its output
    with pikepdf.open(tmp_path / "out.pdf") as pdf:
        assert "vision" in str(pdf.docinfo.get("/Creator"))
        assert pdf.open_metadata()["pdfaid:part"] == "2"
    document = pdfium.PdfDocument(tmp_path / "out.pdf")
    words = document[0].get_textpage().get_text_range().split()
    document.close()
    assert words == " ".join(TEXT).split()


def test_engine_hooks_with_stand_in_models(tmp_path, monkeypatch):
    """generate_ocr, get_orientation and get_deskew on page images, with the classical stand-in models."""
    from vision.pipelines.ocr import ocr_predictor
    from vision.pipelines.ocr.orientation import rotate_image

    def stand_in(threads, detect_orientation):
        return ocr_predictor(
            det_predictor=InkDetector(straight=False),
            reco_predictor=TemplateReader(),
            assume_straight_pages=False,
            detect_orientation=detect_orientation,
        )

    monkeypatch.setattr(plugin, "_predictor", stand_in)
    options = SimpleNamespace(jobs=1)
    upright, _ = render_page()
    Image.fromarray(upright).save(tmp_path / "page.png", dpi=(200, 200))
    tree, text = plugin.VisionEngine.generate_ocr(tmp_path / "page.png", options, page_number=2)
    assert [w.text for w in tree.words] == " ".join(TEXT).split() and text.split("\n") == TEXT
    assert abs(tree.dpi - 200) < 0.01 and tree.page_number == 2  # PNG stores dots per metre
    assert all(0 <= w.confidence <= 1 for w in tree.words) and len(tree.lines) == len(TEXT)
    assert abs(plugin.VisionEngine.get_deskew(tmp_path / "page.png", options)) < 0.5
    Image.fromarray(rotate_image(upright, 90)).save(tmp_path / "turned.png")  # scanned turned clockwise
    orientation = plugin.VisionEngine.get_orientation(tmp_path / "turned.png", options)
    assert (orientation.angle, orientation.confidence) == (270, 15.0)  # turn it 270 clockwise to read it
