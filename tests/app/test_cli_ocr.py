"""``vision ocr``: files and folders in, txt/json/hOCR/ALTO/PDF out, bad files reported and skipped."""

import json
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from lxml import etree
from PIL import Image

sys.path.insert(0, str(Path(__file__).parents[1] / "pipelines"))
from _ocr_stages import TEXT, InkDetector, TemplateReader, render_page  # noqa: E402

from vision.app.cli import build_parser, main  # noqa: E402
from vision.app.cli import ocr as ocr_cli  # noqa: E402
from vision.pipelines.ocr.predictor import ocr_predictor  # noqa: E402


@pytest.fixture(scope="module")
def predictor():
    return ocr_predictor(det_predictor=InkDetector(), reco_predictor=TemplateReader())


def _run(argv: list[str], predictor) -> int:
    return ocr_cli.run(build_parser().parse_args(["ocr", *argv]), predictor=predictor)


def _save_page(path: Path, shift: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(render_page(TEXT[shift:] + TEXT[:shift])[0]).save(path)
    return path


def test_folders_bad_files_and_atomic_outputs(tmp_path, predictor, capsys):
    src = tmp_path / "in"
    _save_page(src / "a.png")
    _save_page(src / "sub" / "b.png", shift=1)
    (src / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    (src / "notes.txt").write_text("not a document")  # folders contribute images and PDFs only
    out = tmp_path / "out"
    code = _run(
        [str(src), str(tmp_path / "missing.png"), "-o", str(out), "--format", "json", "-r"], predictor
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "bad.png" in err and "missing.png" in err
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["a.png.json", "sub/b.png.json"]  # nothing for the bad file, no temporary leftovers
    doc = json.loads((out / "sub" / "b.png.json").read_text())
    words = [w["value"] for p in doc["pages"] for b in p["blocks"] for ln in b["lines"] for w in ln["words"]]
    assert " ".join(words) == " ".join(TEXT[1:] + TEXT[:1])


def test_without_recursive_subfolders_are_left_out(tmp_path, predictor):
    _save_page(tmp_path / "in" / "a.png")
    _save_page(tmp_path / "in" / "sub" / "b.png")
    assert _run([str(tmp_path / "in"), "-o", str(tmp_path / "out")], predictor) == 0
    assert [p.name for p in (tmp_path / "out").rglob("*.txt")] == ["a.png.txt"]


def test_txt_goes_to_stdout(tmp_path, predictor, capsys):
    image = _save_page(tmp_path / "page.png")
    assert _run([str(image)], predictor) == 0
    assert capsys.readouterr().out.rstrip("\n").split("\n") == TEXT
    second = _save_page(tmp_path / "page2.png", shift=2)
    assert _run([str(image), str(second)], predictor) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"==> {image} <==\n") and f"==> {second} <==\n" in out


def test_requests_that_cannot_work_exit_2(tmp_path, predictor, capsys):
    image = _save_page(tmp_path / "page.png")
    assert _run([str(image), "--format", "pdf"], predictor) == 2
    assert _run([str(image), str(image), "--format", "json"], predictor) == 2
    assert "needs -o" in capsys.readouterr().err


def test_pdf_hocr_and_alto_outputs_are_valid(tmp_path, predictor):
    image = _save_page(tmp_path / "page.png")
    pdf_path = tmp_path / "page.searchable.pdf"
    assert _run([str(image), "-o", str(pdf_path), "--format", "pdf"], predictor) == 0
    pdf = pdfium.PdfDocument(str(pdf_path))
    assert pdf[0].get_textpage().get_text_range().split() == " ".join(TEXT).split()
    pdf.close()
    for fmt, ext in (("hocr", "hocr.html"), ("alto", "alto.xml")):
        out = tmp_path / fmt
        out.mkdir()
        assert _run([str(image), "-o", str(out), "--format", fmt], predictor) == 0
        root = etree.parse(str(out / f"page.png.{ext}")).getroot()
        assert root.tag.endswith("html" if fmt == "hocr" else "alto")
    for fmt in ("md", "html"):
        out = tmp_path / f"page.{fmt}"
        assert _run([str(image), "-o", str(out), "--format", fmt], predictor) == 0
        text = out.read_text()
        assert all(word in text for word in " ".join(TEXT).split())
        assert text.startswith("<!DOCTYPE html>") == (fmt == "html")


def test_pdf_inputs_use_their_text_layer_unless_told(tmp_path, predictor, capsys):
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(400, 200))
    pdf.add_page()
    pdf.set_font("helvetica", size=14)
    pdf.text(30, 60, "Born digital words")
    pdf.output(str(tmp_path / "doc.pdf"))
    assert _run([str(tmp_path / "doc.pdf")], predictor) == 0
    assert capsys.readouterr().out.split() == ["Born", "digital", "words"]
    assert (
        _run(
            [
                str(tmp_path / "doc.pdf"),
                "--pdf-text",
                "layer",
                "--format",
                "json",
                "-o",
                str(tmp_path / "doc.json"),
            ],
            predictor,
        )
        == 0
    )
    page = json.loads((tmp_path / "doc.json").read_text())["pages"][0]
    assert [w["confidence"] for b in page["blocks"] for ln in b["lines"] for w in ln["words"]] == [1.0] * 3


def test_write_atomically_replaces_whole_files(tmp_path):
    target = tmp_path / "deep" / "out.txt"
    ocr_cli.write_atomically(target, "first")
    ocr_cli.write_atomically(target, "second")
    assert target.read_text() == "second" and [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_main_builds_the_models_from_the_options(tmp_path, capsys):
    image = _save_page(tmp_path / "page.png")
    out = tmp_path / "page.json"
    code = main(
        [
            "ocr",
            str(image),
            "-o",
            str(out),
            "--format",
            "json",
            "--det-weights",
            "none",
            "--reco-weights",
            "none",
            "--device",
            "cpu",
            "--no-progress",
        ]
    )
    assert code == 0
    doc = json.loads(out.read_text())
    assert len(doc["pages"]) == 1 and doc["pages"][0]["dimensions"] == [360, 640]


def test_jobs_keep_stdout_order(tmp_path, capsys):
    """``--jobs 2`` on the CPU: two predictor lanes with one thread each; ``--jobs 1``: one worker process
    reads and finishes the files for one predictor; ``--jobs 0``: all in this process. Stdout is the same, in
    input order, and the thread count is restored afterwards."""
    import torch

    images = [str(_save_page(tmp_path / f"p{i}.png", shift=3 * i)) for i in range(3)]
    base = ["ocr", *images, "--device", "cpu", "--no-progress"]
    threads = torch.get_num_threads()
    assert main([*base, "--jobs", "1"]) == 0
    one = capsys.readouterr().out
    assert main([*base, "--jobs", "2"]) == 0
    two = capsys.readouterr().out
    assert len(one) > 100 and two == one and [line for line in two.splitlines() if line.startswith("==>")] == [
        f"==> {p} <==" for p in images
    ]
    assert torch.get_num_threads() == threads
    assert main([*base, "--jobs", "0"]) == 0
    assert capsys.readouterr().out == one
    assert main([*base, "--jobs", "-1"]) == 2


def test_vision_ocr_builds_only_its_own_parser() -> None:
    """``vision ocr`` registers its sub-command alone: the training and evaluation tasks (and torchvision,
    which imports ``torch._dynamo``) stay unimported until a command needs them; ``vision -h`` lists all."""
    import subprocess
    import sys

    code = ("import sys; from vision.app.cli import build_parser; p = build_parser('ocr'); "
            "p.parse_args(['ocr', 'x.png']); print(sorted(m for m in ('vision.training.detection', "
            "'vision.evaluation.detection', 'torchvision') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    full = build_parser().format_help()
    assert all(command in full for command in ("ocr", "train", "eval", "serve", "video"))
