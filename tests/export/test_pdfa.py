"""``--output-type pdfa``: the structures PDF/A-2b (ISO 19005-2, level B) requires, checked here with pikepdf,
fontTools and Pillow's LittleCMS. veraPDF, the reference validator, is a Java application that is neither on
PyPI nor in Debian, so :func:`pdfa_2b_violations` checks the rules that apply to what we write, independently
of :mod:`vision.export.pdfa`:

* file: header ``%PDF-1.n`` (n <= 7) followed by a comment of four bytes above 127; a trailer ``/ID``; no
  encryption; qpdf's syntax check;
* metadata: an uncompressed XMP packet (``/Type /Metadata /Subtype /XML``) with ``pdfaid:part`` 2 and
  ``pdfaid:conformance`` B, and every document information entry mirrored in XMP with the same value;
* colour: a ``GTS_PDFA1`` output intent with an embedded ICC profile (RGB, ``N`` 3) that LittleCMS opens;
  no DeviceCMYK image or ``k``/``K`` operator under that RGB intent;
* fonts: every font embedded; a CID font's default width equal to its program's; our text font draws no
  ``.notdef``;
* transparency: PDF/A-2 allows it; pages that use it (soft masks, constant alpha below 1, blend modes)
  need a page group colour space or the output intent; blend modes from the standard set only;
* forbidden: LZW, external streams, PostScript XObjects, image alternates and OPI, interpolated images,
  transfer functions, JavaScript and Launch-like actions, additional actions (``/AA``), embedded files,
  hidden or non-printing annotations.

Inputs: the 10 test scans, the rasterised path (``--force-ocr``), and a born-digital PDF with an embedded
TrueType font; refusals and fixes by :func:`make_pdfa` are checked on documents that break the rules."""

import io
import re

import pikepdf
import pytest
from _pdf_inputs import SCANS, born_digital_pdf, scan_pdf, truth_document
from fontTools.ttLib import TTFont
from PIL import ImageCms

from vision.export.pdfa import PdfaError, make_pdfa, pdfa_problems
from vision.export.searchable import SearchableOptions, searchable_pdf

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
_XMP_OF_INFO = {
    "/Title": "dc:title",
    "/Author": "dc:creator",
    "/Subject": "dc:description",
    "/Keywords": "pdf:Keywords",
    "/Creator": "xmp:CreatorTool",
    "/Producer": "pdf:Producer",
}
_STANDARD_BLEND = {
    "/Normal", "/Compatible", "/Multiply", "/Screen", "/Overlay", "/Darken", "/Lighten", "/ColorDodge",
    "/ColorBurn", "/HardLight", "/SoftLight", "/Difference", "/Exclusion", "/Hue", "/Saturation", "/Color",
    "/Luminosity",
}
_FORBIDDEN_ACTIONS = {
    "/Launch", "/Sound", "/Movie", "/ResetForm", "/ImportData", "/JavaScript", "/Hide", "/SetOCGState",
    "/Rendition", "/Trans", "/GoTo3DView",
}


def _xmp_text(value) -> str:
    if isinstance(value, (list, set, tuple)):
        return "; ".join(sorted(str(v) for v in value)) if isinstance(value, set) else "; ".join(map(str, value))
    return str(value)


def _walk(pdf: pikepdf.Pdf):
    """Every dictionary and stream reachable from the trailer, direct ones included."""
    seen, stack = set(), [pdf.trailer]
    while stack:
        obj = stack.pop()
        if obj.is_indirect and obj.objgen in seen:
            continue
        if obj.is_indirect:
            seen.add(obj.objgen)
        if isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)):
            yield obj
            stack.extend(v for k, v in obj.items() if k != "/Parent" and isinstance(v, pikepdf.Object))
        elif isinstance(obj, pikepdf.Array):
            stack.extend(v for v in obj if isinstance(v, pikepdf.Object))


def _file_violations(data: bytes) -> list[str]:
    found = []
    header = re.match(rb"%PDF-1\.([0-7])\r?\n%([^\r\n]*)", data)
    if header is None:
        found.append("header is not %PDF-1.0..1.7 followed by a comment line")
    elif sum(b > 127 for b in header[2][:4]) < 4:
        found.append("header comment lacks four bytes above 127")
    return found


def _metadata_violations(pdf: pikepdf.Pdf) -> list[str]:
    found = []
    metadata = pdf.Root.get("/Metadata")
    if metadata is None:
        return ["no XMP metadata"]
    if metadata.get("/Filter") is not None:
        found.append("the XMP stream is compressed")
    if (metadata.get("/Type"), metadata.get("/Subtype")) != (pikepdf.Name.Metadata, pikepdf.Name.XML):
        found.append("the XMP stream is not /Type /Metadata /Subtype /XML")
    if b"<?xpacket" not in metadata.read_raw_bytes():
        found.append("no xpacket header")
    meta = pdf.open_metadata()
    if (meta.get("pdfaid:part"), meta.get("pdfaid:conformance")) != ("2", "B"):
        found.append("pdfaid is not part 2, conformance B")
    info = pdf.trailer.get("/Info") or {}
    for key, prop in _XMP_OF_INFO.items():
        if key in info and _xmp_text(meta.get(prop, "")) != str(info[key]):
            found.append(f"info {key} {str(info[key])!r} differs from XMP {prop} {meta.get(prop)!r}")
    return found


def _intent_violations(pdf: pikepdf.Pdf) -> list[str]:
    intents = [i for i in pdf.Root.get("/OutputIntents") or [] if i.get("/S") == pikepdf.Name.GTS_PDFA1]
    if len(intents) != 1:
        return [f"{len(intents)} GTS_PDFA1 output intents"]
    profile = intents[0].get("/DestOutputProfile")
    if profile is None:
        return ["the output intent has no ICC profile"]
    icc = ImageCms.ImageCmsProfile(io.BytesIO(profile.read_bytes()))
    if icc.profile.xcolor_space.strip() != "RGB" or int(profile.N) != 3:
        return ["the output intent's profile is not RGB with N 3"]
    return []


def _font_violations(pdf: pikepdf.Pdf) -> list[str]:
    found = []
    for obj in _walk(pdf):
        if not isinstance(obj, pikepdf.Dictionary) or obj.get("/Type") != pikepdf.Name.Font:
            continue
        if obj.get("/Subtype") == pikepdf.Name.Type3:
            continue
        font = obj.DescendantFonts[0] if obj.get("/Subtype") == pikepdf.Name.Type0 else obj
        descriptor = font.get("/FontDescriptor")
        files = [descriptor.get(k) for k in ("/FontFile", "/FontFile2", "/FontFile3")] if descriptor else []
        if not any(f is not None for f in files):
            found.append(f"font {obj.get('/BaseFont')} is not embedded")
            continue
        if obj.get("/Subtype") == pikepdf.Name.Type0 and "/FontFile2" in descriptor:
            program = TTFont(io.BytesIO(descriptor.FontFile2.read_bytes()))
            advances = {program["hmtx"][name][0] for name in program.getGlyphOrder()}
            if "/DW" in font and "/W" not in font and advances != {int(font.DW)}:
                found.append(f"font {obj.get('/BaseFont')}: /DW differs from the program's widths")
            cid_map = font.get("/CIDToGIDMap")  # ours maps every code to its one box glyph, never to 0
            ours = str(obj.get("/BaseFont")) == "/VisionGlyphless"
            if ours and isinstance(cid_map, pikepdf.Stream) and cid_map.read_bytes()[:2] == b"\x00\x00":
                found.append(f"font {obj.get('/BaseFont')}: text drawn with .notdef")
    return found


def _transparent(page: pikepdf.Page) -> bool:
    resources = page.obj.get("/Resources") or {}
    for gs in (resources.get("/ExtGState") or {}).values():
        if gs.get("/SMask", pikepdf.Name.None_) != pikepdf.Name.None_:
            return True
        if float(gs.get("/CA", 1)) < 1 or float(gs.get("/ca", 1)) < 1:
            return True
        if str(gs.get("/BM", "/Normal")) not in ("/Normal", "/Compatible"):
            return True
    return any("/SMask" in image for image in page.get_images().values())


def _object_violations(pdf: pikepdf.Pdf) -> list[str]:
    found: set[str] = set()
    names = pdf.Root.get("/Names") or {}
    if "/JavaScript" in names or "/EmbeddedFiles" in names:
        found.add("JavaScript or embedded files in the names tree")
    if "/AA" in pdf.Root:
        found.add("document additional actions")
    for obj in _walk(pdf):
        if isinstance(obj, pikepdf.Stream):
            filters = obj.get("/Filter")
            filters = list(filters) if isinstance(filters, pikepdf.Array) else [filters]
            if pikepdf.Name.LZWDecode in filters:
                found.add("LZW")
            if "/F" in obj:
                found.add("external stream")
            if obj.get("/Subtype") == pikepdf.Name.PS:
                found.add("PostScript XObject")
            if obj.get("/Subtype") == pikepdf.Name.Image:
                if "/Alternates" in obj or "/OPI" in obj:
                    found.add("image alternates or OPI")
                if obj.get("/Interpolate") is not None and bool(obj.Interpolate):
                    found.add("interpolated image")
                if obj.get("/ColorSpace") == pikepdf.Name.DeviceCMYK:
                    found.add("DeviceCMYK image under an RGB output intent")
        elif isinstance(obj, pikepdf.Dictionary):
            if "/JS" in obj or (str(obj.get("/S")) in _FORBIDDEN_ACTIONS and obj.get("/Type") in (None, "/Action")):
                found.add(f"forbidden action {obj.get('/S')}")
            if "/BM" in obj:
                modes = obj.BM if isinstance(obj.BM, pikepdf.Array) else [obj.BM]
                if any(str(m) not in _STANDARD_BLEND for m in modes):
                    found.add("non-standard blend mode")
            if "/TR" in obj and obj.get("/Type") in (None, pikepdf.Name.ExtGState):
                found.add("transfer function")
    has_intent = bool(pdf.Root.get("/OutputIntents"))
    for number, page in enumerate(pdf.pages, start=1):
        if "/AA" in page.obj:
            found.add(f"page {number} additional actions")
        for annot in page.obj.get("/Annots") or []:
            flags = int(annot.get("/F", 0))
            if annot.get("/Subtype") != pikepdf.Name.Popup and (not flags & 4 or flags & (1 | 2 | 32)):
                found.add(f"page {number}: an annotation is hidden or not printed")
            if "/AA" in annot:
                found.add(f"page {number}: annotation additional actions")
        group = page.obj.get("/Group")
        if _transparent(page) and not has_intent and (group is None or "/CS" not in group):
            found.add(f"page {number}: transparency without a group colour space or output intent")
        for operands, operator in pikepdf.parse_content_stream(page):
            if str(operator) in ("k", "K"):
                found.add(f"page {number}: DeviceCMYK colour under an RGB output intent")
                break
    return sorted(found)


def pdfa_2b_violations(data: bytes) -> list[str]:
    """The PDF/A-2b rules (of the module docstring) that ``data`` breaks: empty when it passes."""
    found = _file_violations(data)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        found += [f"qpdf: {m}" for m in pdf.check_pdf_syntax()]
        if pdf.is_encrypted or "/Encrypt" in pdf.trailer:
            found.append("encrypted")
        ids = pdf.trailer.get("/ID")
        if not isinstance(ids, pikepdf.Array) or len(ids) != 2:
            found.append("no trailer /ID pair")
        if pdf.pdf_version > "1.7":
            found.append(f"PDF {pdf.pdf_version}")
        found += _metadata_violations(pdf) + _intent_violations(pdf) + _font_violations(pdf)
        found += _object_violations(pdf)
    return found


@pytest.mark.parametrize("index", range(len(SCANS)))
def test_scans_become_pdfa_2b(index):
    data, truth = scan_pdf(index)
    out = searchable_pdf(data, truth_document(truth), SearchableOptions(pdfa=True))
    assert pdfa_2b_violations(out) == []
    with pikepdf.open(io.BytesIO(out)) as pdf:
        assert pdfa_problems(pdf) == []


def test_rasterised_pages_become_pdfa_2b():
    import numpy as np

    from vision.export.pdf import pdf_bytes

    data, truth = scan_pdf(0)
    doc = truth_document(truth)
    doc.pages[0].image = np.full((400, 700, 3), 255, np.uint8)
    with pikepdf.open(io.BytesIO(pdf_bytes(doc, dpi=120))) as pdf:
        make_pdfa(pdf, creator="test")
        out = io.BytesIO()
        pdf.save(out, force_version="1.7", encryption=False)
    assert pdfa_2b_violations(out.getvalue()) == []


def test_born_digital_pages_with_embedded_fonts_become_pdfa_2b():
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(420, 300))
    pdf.add_font("DejaVu", fname=DEJAVU)
    pdf.set_font("DejaVu", size=14)
    pdf.set_title("Quarterly report")
    pdf.set_author("Finance")
    pdf.add_page()
    pdf.text(30, 60, "Born-digital text, embedded font: Größe")
    out = searchable_pdf(bytes(pdf.output()), truth_document([]), SearchableOptions(pdfa=True))
    assert pdfa_2b_violations(out) == []


def test_born_digital_pages_with_unembedded_fonts_are_refused_clearly():
    with pytest.raises(PdfaError, match="not embedded.*--force-ocr"):
        searchable_pdf(born_digital_pdf(0), truth_document([]), SearchableOptions(pdfa=True))


def _scan_with(change) -> bytes:
    """Scan 0 with ``change(pdf, page)`` applied."""
    data, _ = scan_pdf(0)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        change(pdf, pdf.pages[0])
        out = io.BytesIO()
        pdf.save(out)
    return out.getvalue()


def _js(pdf, page):
    pdf.Root.OpenAction = pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=pikepdf.String("app.alert(1)"))


def _launch(pdf, page):
    action = pikepdf.Dictionary(Type=pikepdf.Name.Action, S=pikepdf.Name.Launch, F=pikepdf.String("x.exe"))
    page.obj.AA = pikepdf.Dictionary(O=action)


def _cmyk(pdf, page):
    image = pdf.make_stream(b"\x00" * 4, Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Image, Width=1,
                            Height=1, BitsPerComponent=8, ColorSpace=pikepdf.Name.DeviceCMYK)
    page.obj.Resources.XObject.Cmyk = image


def _blend(pdf, page):
    page.obj.Resources.ExtGState = pikepdf.Dictionary(G0=pikepdf.Dictionary(
        Type=pikepdf.Name.ExtGState, BM=pikepdf.Name("/Dissolve"), CA=0.5))


def _embedded_file(pdf, page):
    pdf.attachments["notes.txt"] = b"attached"


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        (_js, "JavaScript"),
        (_launch, "additional actions"),
        (_cmyk, "DeviceCMYK"),
        (_blend, "blend mode"),
        (_embedded_file, "embeds files"),
    ],
)
def test_what_cannot_be_fixed_is_refused_and_would_be_caught(change, refusal):
    data = _scan_with(change)
    with pytest.raises(PdfaError, match=refusal):
        searchable_pdf(data, truth_document([]), SearchableOptions(pdfa=True))
    with pikepdf.open(io.BytesIO(data)) as pdf:  # the independent check sees it too
        make_pdfa_unchecked(pdf)
        out = io.BytesIO()
        pdf.save(out, force_version="1.7", encryption=False)
    assert pdfa_2b_violations(out.getvalue()) != []


def make_pdfa_unchecked(pdf: pikepdf.Pdf) -> None:
    """:func:`make_pdfa` without its refusals (to show the independent check would catch what it refuses)."""
    import vision.export.pdfa as pdfa

    real = pdfa.pdfa_problems
    pdfa.pdfa_problems = lambda _pdf: []
    try:
        make_pdfa(pdf, creator="test")
    finally:
        pdfa.pdfa_problems = real


def test_interpolation_and_hidden_annotations_are_fixed():
    def change(pdf, page):
        next(iter(page.get_images().values())).Interpolate = True
        page.obj.Annots = pdf.make_indirect(pikepdf.Array([pikepdf.Dictionary(
            Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Link, Rect=[0, 0, 10, 10], F=2)]))

    data = _scan_with(change)
    fixed = searchable_pdf(data, truth_document([]), SearchableOptions(pdfa=True))
    assert pdfa_2b_violations(fixed) == []
    with pikepdf.open(io.BytesIO(data)) as pdf:  # and the input did break both rules
        assert next(iter(pdf.pages[0].get_images().values())).Interpolate
        assert int(pdf.pages[0].obj.Annots[0].F) == 2
