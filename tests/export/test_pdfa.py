"""``--output-type pdfa``: the structures PDF/A-2b requires, checked with pikepdf and fontTools (veraPDF is
not on PyPI): XMP identification, an sRGB output intent, every font embedded with matching widths, no
encryption, a file identifier, PDF 1.7 at most, an uncompressed XMP packet; plus qpdf's own check."""

import io

import pikepdf
import pytest
from _pdf_inputs import born_digital_pdf, scan_pdf, truth_document
from fontTools.ttLib import TTFont
from PIL import ImageCms

from vision.export.pdfa import PdfaError, pdfa_problems
from vision.export.searchable import SearchableOptions, searchable_pdf


def _check_pdfa_2b(data: bytes) -> None:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        assert pdf.check_pdf_syntax() == []  # qpdf's structural check
        assert not pdf.is_encrypted and "/ID" in pdf.trailer
        assert pdf.pdf_version <= "1.7"
        meta = pdf.open_metadata()
        assert (meta["pdfaid:part"], meta["pdfaid:conformance"]) == ("2", "B")
        assert pdf.Root.Metadata.get("/Filter") is None  # the XMP packet stays readable as text
        assert b"<?xpacket" in pdf.Root.Metadata.read_raw_bytes()
        (intent,) = pdf.Root.OutputIntents
        assert intent.S == pikepdf.Name.GTS_PDFA1
        profile = ImageCms.ImageCmsProfile(io.BytesIO(intent.DestOutputProfile.read_bytes()))
        assert profile.profile.xcolor_space.strip() == "RGB" and int(intent.DestOutputProfile.N) == 3
        for page in pdf.pages:
            for font in page.Resources.get("/Font", {}).values():
                if font.Subtype == pikepdf.Name.Type0:
                    cid = font.DescendantFonts[0]
                    program = TTFont(io.BytesIO(cid.FontDescriptor.FontFile2.read_bytes()))
                    advances = {program["hmtx"][name][0] for name in program.getGlyphOrder()}
                    assert advances == {int(cid.DW)}  # widths in the PDF match the font program
                    assert cid.CIDToGIDMap.read_bytes()[:2] != b"\x00\x00"  # no text drawn with .notdef
                else:
                    assert any(k in font.FontDescriptor for k in ("/FontFile", "/FontFile2", "/FontFile3"))
        assert pdfa_problems(pdf) == []


@pytest.mark.parametrize("index", [0, 3, 7])
def test_scans_become_pdfa_2b(index):
    data, truth = scan_pdf(index)
    out = searchable_pdf(data, truth_document(truth), SearchableOptions(pdfa=True))
    _check_pdfa_2b(out)


def test_born_digital_pages_with_unembedded_fonts_are_refused_clearly():
    with pytest.raises(PdfaError, match="not embedded.*--force-ocr"):
        searchable_pdf(born_digital_pdf(0), truth_document([]), SearchableOptions(pdfa=True))
