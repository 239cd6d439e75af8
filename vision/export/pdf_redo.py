"""Text in PDF content streams: whether a page shows any (:func:`page_has_text`), and removing an earlier OCR
layer (invisible text, render mode 3) while leaving visible content as it is (:func:`strip_invisible_text`).

``strip_invisible_text`` is used by ``--redo-ocr``: the pages' text drawn with ``3 Tr`` (what OCR tools,
ours included, write) is dropped from their content streams and from the form XObjects they draw (OCRmyPDF
puts its layer in one); visible text, images and vector graphics are kept. A page whose content has no invisible text is not
rewritten at all. A page that had an OCR layer is OCR'd again even when it also shows visible text (a stamp,
a typed header on a scan): its new layer leaves out the words over that visible text
(:class:`~vision.export.searchable.SearchableOptions` ``redo_pages``), so that text is neither lost nor
doubled; pages that never had an OCR layer stay as they are.
"""

from __future__ import annotations

import pikepdf

__all__ = ["page_has_text", "strip_invisible_text", "strip_ocr_layer"]

_SHOW = frozenset({"Tj", "TJ", "'", '"'})


def _shows_text(instructions: list) -> bool:
    for operands, operator in instructions:
        if str(operator) in _SHOW and operands:
            shown = operands[-1]  # the string (Tj, ', ") or the array of strings and kerns (TJ)
            parts = list(shown) if isinstance(shown, pikepdf.Array) else [shown]
            if any(isinstance(p, pikepdf.String) and bytes(p).strip() for p in parts):
                return True
    return False


def page_has_text(page: pikepdf.Page) -> bool:
    """Whether ``page`` shows any non-blank text, in its content or the form XObjects it holds (visible or
    not: an earlier OCR layer counts, as it does for ``--pdf-text auto``)."""
    if _shows_text(pikepdf.parse_content_stream(page)):
        return True
    stack, seen = [page.obj.get("/Resources")], set()
    while stack:
        resources = stack.pop()
        if not isinstance(resources, pikepdf.Dictionary):
            continue
        for xobject in (resources.get("/XObject") or {}).values():
            if xobject.get("/Subtype") != pikepdf.Name.Form or xobject.objgen in seen:
                continue
            seen.add(xobject.objgen)
            if _shows_text(pikepdf.parse_content_stream(xobject)):
                return True
            stack.append(xobject.get("/Resources"))
    return False


def _strip(instructions: list) -> tuple[list, bool]:
    """``instructions`` without text shown in render mode 3, and whether any was dropped."""
    mode, stack, kept, dropped = 0, [], [], False
    for operands, operator in instructions:
        op = str(operator)
        if op == "q":
            stack.append(mode)
        elif op == "Q" and stack:
            mode = stack.pop()
        elif op == "Tr" and operands:
            mode = int(operands[0])
        elif op in _SHOW and mode == 3:
            dropped = True
            if op in ("'", '"'):  # these also move to the next line: keep that
                kept.append(pikepdf.ContentStreamInstruction([], pikepdf.Operator("T*")))
            continue
        kept.append(pikepdf.ContentStreamInstruction(operands, operator))
    return kept, dropped


def _strip_forms(pdf: pikepdf.Pdf, resources: pikepdf.Object, seen: set) -> bool:
    changed = False
    if not isinstance(resources, pikepdf.Dictionary):
        return False
    for xobject in (resources.get("/XObject") or {}).values():
        if xobject.get("/Subtype") != pikepdf.Name.Form or xobject.objgen in seen:
            continue
        seen.add(xobject.objgen)
        kept, dropped = _strip(pikepdf.parse_content_stream(xobject))
        if dropped:
            xobject.write(pikepdf.unparse_content_stream(kept))
            changed = True
        changed |= _strip_forms(pdf, xobject.get("/Resources"), seen)
    return changed


def strip_ocr_layer(pdf: pikepdf.Pdf) -> list[int]:
    """Drop invisible text from every page of ``pdf`` in place; returns the (0-based) indices of the pages
    that had some: the pages ``--redo-ocr`` OCRs again, whatever visible text they keep."""
    changed, seen = [], set()
    for index, page in enumerate(pdf.pages):
        kept, dropped = _strip(pikepdf.parse_content_stream(page))
        if dropped:
            page.obj.Contents = pdf.make_stream(pikepdf.unparse_content_stream(kept))
        forms = _strip_forms(pdf, page.obj.get("/Resources"), seen)
        if dropped or forms:
            changed.append(index)
    return changed


def strip_invisible_text(pdf: pikepdf.Pdf) -> int:
    """Drop invisible text from every page of ``pdf`` in place; returns how many pages changed."""
    return len(strip_ocr_layer(pdf))
