"""``vision ocr`` as OCRmyPDF and Tesseract users expect it: a searchable PDF on the original, named without
a doubled extension; --pages, --password, stdin/stdout, --format tsv, --redo-ocr, --force-ocr,
--output-type pdfa, --rotate-pages and --deskew."""

import io
import sys
from pathlib import Path

import img2pdf
import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).parents[1] / "pipelines"))
from _ocr_stages import TEXT, InkDetector, TemplateReader, render_page  # noqa: E402

from vision.app.cli import build_parser  # noqa: E402
from vision.app.cli import ocr as ocr_cli  # noqa: E402
from vision.app.cli._ocr_io import parse_pages  # noqa: E402
from vision.export.tsv import HEADER  # noqa: E402
from vision.pipelines.ocr import ocr_predictor  # noqa: E402

WORDS = " ".join(TEXT).split()


@pytest.fixture(scope="module")
def predictor():
    return ocr_predictor(det_predictor=InkDetector(), reco_predictor=TemplateReader())


def _run(argv: list[str], predictor) -> int:
    return ocr_cli.run(
        build_parser().parse_args(["ocr", "--dpi", "120", "--no-progress", *argv]), predictor=predictor
    )


def _scan(pages: int = 1) -> bytes:
    images = []
    for k in range(pages):
        buf = io.BytesIO()
        Image.fromarray(render_page(TEXT[k:] + TEXT[:k])[0]).convert("L").save(buf, "PNG", dpi=(120, 120))
        images.append(buf.getvalue())
    return img2pdf.convert(images)


def _page_words(data: bytes) -> list[list[str]]:
    document = pdfium.PdfDocument(data)
    words = [document[i].get_textpage().get_text_range().split() for i in range(len(document))]
    document.close()
    return words


def _images(data: bytes) -> list[bytes]:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        return [bytes(im.read_raw_bytes()) for page in pdf.pages for im in page.get_images().values()]


def test_pdf_output_is_the_scan_with_a_text_layer_under_the_same_name(tmp_path, predictor):
    (tmp_path / "in").mkdir()
    source = tmp_path / "in" / "scan.pdf"
    source.write_bytes(_scan())
    assert _run([str(tmp_path / "in"), "-o", str(tmp_path / "out"), "-f", "pdf"], predictor) == 0
    out = (tmp_path / "out" / "scan.pdf").read_bytes()  # not scan.pdf.pdf
    assert _images(out) == _images(source.read_bytes())
    assert _page_words(out) == [WORDS]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["scan.pdf"]


def test_an_output_never_overwrites_its_input(tmp_path, predictor, capsys):
    (tmp_path / "scan.pdf").write_bytes(_scan())
    assert _run([str(tmp_path), "-o", str(tmp_path), "-f", "pdf"], predictor) == 2
    assert "overwrite its input" in capsys.readouterr().err


def test_pages_selects_pages_to_ocr_and_keeps_the_others(tmp_path, predictor, capsys):
    source = tmp_path / "three.pdf"
    source.write_bytes(_scan(3))
    assert _run([str(source), "--pages", "2", "-f", "pdf", "-o", str(tmp_path / "o.pdf")], predictor) == 0
    shifted = " ".join(TEXT[1:] + TEXT[:1]).split()
    assert _page_words((tmp_path / "o.pdf").read_bytes()) == [[], shifted, []]
    assert _run([str(source), "--pages", "2-3"], predictor) == 0
    assert capsys.readouterr().out.split() == shifted + " ".join(TEXT[2:] + TEXT[:2]).split()
    assert _run([str(source), "--pages", "5"], predictor) == 1
    assert "out of range" in capsys.readouterr().err


def test_parse_pages_reads_ocrmypdf_page_lists():
    assert parse_pages("1-3,7") == [0, 1, 2, 6]
    assert parse_pages(" 2 , 1-2 ") == [0, 1]
    for bad in ("0", "3-1", "a", "1-", ""):
        with pytest.raises(Exception, match="page"):
            parse_pages(bad)


def test_password_opens_encrypted_pdfs(tmp_path, predictor, capsys):
    with pikepdf.open(io.BytesIO(_scan())) as pdf:
        pdf.save(tmp_path / "locked.pdf", encryption=pikepdf.Encryption(owner="o", user="pw"))
    assert _run([str(tmp_path / "locked.pdf")], predictor) == 1
    assert "password" in capsys.readouterr().err
    assert _run([str(tmp_path / "locked.pdf"), "--password", "pw"], predictor) == 0
    assert capsys.readouterr().out.split() == WORDS
    out = tmp_path / "open.pdf"
    assert (
        _run([str(tmp_path / "locked.pdf"), "--password", "pw", "-f", "pdf", "-o", str(out)], predictor) == 0
    )
    with pikepdf.open(out) as pdf:
        assert not pdf.is_encrypted


def test_dash_reads_stdin_and_writes_stdout(predictor, monkeypatch, capsysbinary):
    source = _scan()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(source)))
    assert _run(["-", "-f", "pdf"], predictor) == 0
    out = capsysbinary.readouterr().out
    assert out.startswith(b"%PDF-") and _page_words(out) == [WORDS] and _images(out) == _images(source)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(source)))
    assert _run(["-", "-o", "-", "-f", "txt"], predictor) == 0
    assert capsysbinary.readouterr().out.decode().split() == WORDS


def test_tsv_has_tesseracts_columns(tmp_path, predictor, capsys):
    image = tmp_path / "page.png"
    Image.fromarray(render_page()[0]).save(image)
    assert _run([str(image), "-f", "tsv"], predictor) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert "\t".join(rows[0]) == HEADER and all(len(r) == 12 for r in rows)
    words = [r for r in rows[1:] if r[0] == "5"]
    assert [r[11] for r in words] == WORDS
    assert rows[1][:2] == ["1", "1"] and rows[1][6:10] == ["0", "0", "640", "360"]  # the page row
    for r in words:
        assert 0 <= float(r[10]) <= 100 and int(r[8]) > 0 and int(r[9]) > 0
    assert {r[0] for r in rows[1:]} == {"1", "2", "3", "4", "5"}
    assert _run([str(image), "-o", str(tmp_path / "out") + "/", "-f", "tsv"], predictor) == 0
    assert (tmp_path / "out" / "page.png.tsv").is_file()


def test_redo_ocr_replaces_the_earlier_layer(tmp_path, predictor):
    source = tmp_path / "scan.pdf"
    source.write_bytes(_scan())
    first, second = tmp_path / "first.pdf", tmp_path / "second.pdf"
    assert _run([str(source), "-f", "pdf", "-o", str(first)], predictor) == 0
    assert _run([str(first), "-f", "pdf", "-o", str(tmp_path / "skipped.pdf")], predictor) == 0
    assert _page_words((tmp_path / "skipped.pdf").read_bytes()) == [WORDS]  # already has text: left as is
    assert _run([str(first), "--redo-ocr", "-f", "pdf", "-o", str(second)], predictor) == 0
    assert _page_words(second.read_bytes()) == [WORDS]  # once, not twice
    assert _images(second.read_bytes()) == _images(source.read_bytes())


def _stamp(pdf: pikepdf.Pdf, page: pikepdf.Page, text: str) -> bytes:
    """Draw ``text`` visibly (Helvetica, 14 pt) near the bottom left of ``page``; returns the stream drawn."""
    font = pdf.make_indirect(
        pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)
    )
    resources = page.obj.Resources
    if "/Font" not in resources:
        resources.Font = pikepdf.Dictionary()
    resources.Font.Stamp = font
    drawn = f"q BT /Stamp 14 Tf 24 36 Td ({text}) Tj ET Q".encode()
    page.contents_add(pdf.make_stream(drawn), prepend=False)
    return drawn


def _contents(data: bytes) -> list[bytes]:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        out = []
        for page in pdf.pages:
            contents = page.obj.Contents
            streams = contents if isinstance(contents, pikepdf.Array) else [contents]
            out.append(b"\n".join(s.read_bytes() for s in streams))
        return out


def _shown(data: bytes, index: int) -> list[tuple[int, str]]:
    """``(render mode, text)`` of each simple-font string the page's own content shows visibly (mode != 3)."""
    with pikepdf.open(io.BytesIO(data)) as pdf:
        mode, stack, shown = 0, [], []
        for operands, operator in pikepdf.parse_content_stream(pdf.pages[index]):
            op = str(operator)
            if op == "q":
                stack.append(mode)
            elif op == "Q" and stack:
                mode = stack.pop()
            elif op == "Tr":
                mode = int(operands[0])
            elif op == "Tj" and mode != 3:
                shown.append((mode, bytes(operands[0]).decode("latin-1")))
        return shown


def test_redo_ocr_on_mixed_content_replaces_only_the_ocr_layer(tmp_path, predictor):
    """A scan OCR'd before that also shows born-digital text (a stamp), plus a born-digital page:
    --redo-ocr replaces the invisible layer of the scan, keeps the stamp (visible, and not doubled by the
    new layer), and leaves the born-digital page as it was."""
    from fpdf import FPDF

    source = tmp_path / "scan.pdf"
    source.write_bytes(_scan())
    ocrd = tmp_path / "ocrd.pdf"
    assert _run([str(source), "-f", "pdf", "-o", str(ocrd)], predictor) == 0
    born = FPDF(unit="pt", format=(700 * 72 / 120, 400 * 72 / 120))
    born.add_page()
    born.set_font("helvetica", size=13)
    born.text(24, 40, "Born digital words")
    mixed = tmp_path / "mixed.pdf"
    with pikepdf.open(ocrd) as pdf, pikepdf.open(io.BytesIO(bytes(born.output()))) as other:
        _stamp(pdf, pdf.pages[0], "Stamped Approved")
        pdf.pages.append(other.pages[0])
        pdf.save(mixed)
    before = mixed.read_bytes()
    assert _page_words(before) == [WORDS + ["Stamped", "Approved"], ["Born", "digital", "words"]]

    out = tmp_path / "redone.pdf"
    assert _run([str(mixed), "--redo-ocr", "-f", "pdf", "-o", str(out)], predictor) == 0
    after = out.read_bytes()
    words = _page_words(after)
    assert sorted(words[0]) == sorted(WORDS + ["Stamped", "Approved"])  # the scan's words once, the stamp once
    assert words[1] == ["Born", "digital", "words"]
    assert _shown(after, 0) == [(0, "Stamped Approved")]  # the stamp, drawn visibly as before
    assert _shown(before, 0)[-1] == (0, "Stamped Approved")
    assert _contents(after)[1] == _contents(before)[1]  # the born-digital page is untouched
    assert _images(after) == _images(source.read_bytes())


def test_force_ocr_rasterises_born_digital_pages_and_pdfa_follows(tmp_path, predictor):
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(700 * 72 / 120, 400 * 72 / 120))
    pdf.add_page()
    pdf.set_font("helvetica", size=13)
    pdf.text(24, 40, "Born digital words")
    pdf.output(str(tmp_path / "doc.pdf"))
    out = tmp_path / "out.pdf"
    assert (
        _run(
            [str(tmp_path / "doc.pdf"), "--force-ocr", "--output-type", "pdfa", "-f", "pdf", "-o", str(out)],
            predictor,
        )
        == 0
    )
    with pikepdf.open(out) as result:
        assert len(result.pages[0].get_images()) == 1  # the page is now an image
        assert result.open_metadata()["pdfaid:part"] == "2"
    untouched = tmp_path / "kept.pdf"
    assert _run([str(tmp_path / "doc.pdf"), "-f", "pdf", "-o", str(untouched)], predictor) == 0
    assert _page_words(untouched.read_bytes()) == [["Born", "digital", "words"]]


def test_rotate_pages_and_deskew_turn_on_what_they_need(monkeypatch):
    seen = {}
    monkeypatch.setattr(ocr_cli, "ocr_predictor_from_args", lambda args, **kw: seen.update(kw))
    ocr_cli.build_predictor(build_parser().parse_args(["ocr", "x.pdf", "--rotate-pages", "--deskew"]))
    assert seen["detect_orientation"] is True and seen["assume_straight_pages"] is False
    ocr_cli.build_predictor(build_parser().parse_args(["ocr", "x.pdf", "--force-ocr"]))
    assert seen["pdf_text"] == "ocr" and seen["detect_orientation"] is False
