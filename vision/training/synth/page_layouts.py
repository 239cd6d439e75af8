"""Page layouts for :class:`vision.training.synth.pages.PageRenderer`: one function per document kind.

Each ``layout(renderer, canvas, rng)`` draws onto the canvas through the renderer's primitives (which record
word boxes). Sizes are pixels of a page about 750 to 1300 px wide (~90 to 150 dpi for Letter/A4), so body
text of 8 to 24 px spans roughly 6 to 17 pt and headings reach 72 pt.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from vision.training.synth.fonts import FontInfo

__all__ = ["page_size", "article", "letter", "form", "receipt", "table", "invoice", "slide"]

_INK = ((0, 0, 0), (25, 25, 25), (50, 50, 50), (20, 30, 110), (10, 10, 70), (120, 20, 20))
_INK_P = (0.55, 0.15, 0.08, 0.12, 0.05, 0.05)


def page_size(rng: np.random.Generator, layout: str) -> tuple[int, int]:
    """``(width, height)`` in pixels for a page of ``layout``."""
    if layout == "receipt":
        w = int(rng.integers(330, 700))
        return w, int(w * rng.uniform(1.4, 3.2))
    if layout == "slide":
        w = int(rng.integers(900, 1400))
        return w, int(w / rng.choice([4 / 3, 16 / 9, 16 / 10]))
    w = int(rng.integers(720, 1300))
    return w, int(w * rng.uniform(1.25, 1.45))


def _size(rng: np.random.Generator, lo: float, hi: float) -> int:
    return int(round(np.exp(rng.uniform(np.log(lo), np.log(hi)))))


def _ink(rng: np.random.Generator) -> tuple[int, int, int]:
    return _INK[int(rng.choice(len(_INK), p=_INK_P))]


def _styled(r, rng: np.random.Generator, want: str, base: FontInfo | None = None) -> FontInfo:
    """A font with style ``want`` (bold/italic/mono...), preferring the family of ``base``."""
    pool = [f for f in r.fonts if want in f.styles]
    if base is not None:
        same = [f for f in pool if f.family == base.family]
        pool = same or pool
    return pool[int(rng.integers(len(pool)))] if pool else (base or r._pick_font(rng))


def _line(
    r,
    c,
    rng,
    x0: float,
    x1: float,
    baseline: float,
    words: Sequence[str],
    font: FontInfo,
    size: int,
    fill,
    align: str = "left",
) -> float:
    """Draw ``words`` aligned left/center/right within ``[x0, x1]``; returns the x after the text."""
    from vision.training.synth.pages import _font

    f = _font(str(font.path), size)  # _font quantizes the size as text_run does
    width = sum(f.getlength(w) for w in words) + f.getlength(" ") * max(len(words) - 1, 0)
    x = x0 if align == "left" else (x1 - width if align == "right" else (x0 + x1 - width) / 2)
    return r.text_run(c, max(x, x0), baseline, words, font, size, fill, max_x=x1)


def _words(r, rng, font, n: int, upper: bool = False) -> list[str]:
    return [r.word(rng, font, upper) for _ in range(n)]


def article(r, c, rng: np.random.Generator) -> None:
    """Title, 1-3 columns of paragraphs with headings, figures, captions, page number."""
    w, h = c.size
    m = w * rng.uniform(0.05, 0.12)
    cols = int(rng.choice([1, 2, 3], p=[0.4, 0.45, 0.15]))
    body = r._pick_font(rng)
    size = _size(rng, 8, 20 if cols == 1 else 15)
    ink = _ink(rng)
    y = h * rng.uniform(0.04, 0.1)
    tsize = int(size * rng.uniform(1.5, 3.5))
    tfont = _styled(r, rng, "bold", body) if rng.random() < 0.7 else r._pick_font(rng)
    for _ in range(int(rng.integers(1, 3))):
        _line(
            r,
            c,
            rng,
            m,
            w - m,
            y + tsize,
            _words(r, rng, tfont, int(rng.integers(2, 7))),
            tfont,
            tsize,
            ink,
            str(rng.choice(["left", "center"])),
        )
        y += tsize * 1.3
    if rng.random() < 0.6:
        y = r.paragraph(c, rng, m, y + size, w - m, h, r._pick_font(rng), max(7, int(size * 0.9)), ink, 2)
    y += size
    gutter = size * rng.uniform(1.5, 3)
    cw = (w - 2 * m - gutter * (cols - 1)) / cols
    bottom = h - h * rng.uniform(0.05, 0.1)
    hfont = _styled(r, rng, "bold", body)
    for k in range(cols):
        x0, yy = m + k * (cw + gutter), y
        while yy < bottom - 3 * size:
            roll = rng.random()
            if roll < 0.15:
                _line(
                    r,
                    c,
                    rng,
                    x0,
                    x0 + cw,
                    yy + size * 1.3,
                    _words(r, rng, hfont, int(rng.integers(1, 5))),
                    hfont,
                    int(size * rng.uniform(1.0, 1.5)),
                    ink,
                )
                yy += size * 2
            elif roll < 0.22:
                fh = min(cw * rng.uniform(0.3, 0.8), bottom - yy - 3 * size)
                c.draw.rectangle(
                    [x0, yy, x0 + cw, yy + fh],
                    outline=(0, 0, 0),
                    fill=tuple(int(v) for v in rng.integers(180, 255, 3)),
                )
                yy = r.paragraph(
                    c,
                    rng,
                    x0,
                    yy + fh + size * 0.5,
                    x0 + cw,
                    bottom,
                    _styled(r, rng, "italic", body),
                    max(7, int(size * 0.85)),
                    ink,
                    int(rng.integers(1, 3)),
                )
            else:
                yy = r.paragraph(
                    c,
                    rng,
                    x0,
                    yy,
                    x0 + cw,
                    bottom,
                    body,
                    size,
                    ink,
                    int(rng.integers(3, 12)),
                    justify=rng.random() < 0.6,
                ) + size * rng.uniform(0.3, 1.0)
    if rng.random() < 0.7:
        _line(r, c, rng, m, w - m, h - h * 0.03, [str(int(rng.integers(1, 400)))], body, size, ink, "center")


def letter(r, c, rng: np.random.Generator) -> None:
    """Letterhead, date, address block, salutation, paragraphs, signature, closing."""
    w, h = c.size
    m = w * rng.uniform(0.08, 0.14)
    body = r._pick_font(rng)
    size = _size(rng, 9, 18)
    ink = _ink(rng)
    y = h * 0.05
    if rng.random() < 0.5:
        r.logo(c, rng, m, y, size * 3)
    head = _styled(r, rng, "bold")
    hs = _size(rng, 16, 48)
    _line(
        r,
        c,
        rng,
        m,
        w - m,
        y + hs,
        _words(r, rng, head, int(rng.integers(1, 4)), rng.random() < 0.6),
        head,
        hs,
        _ink(rng),
        str(rng.choice(["left", "center", "right"])),
    )
    y += hs * 1.4
    for _ in range(int(rng.integers(1, 4))):
        _line(
            r,
            c,
            rng,
            m,
            w - m,
            y + size,
            _words(r, rng, body, int(rng.integers(3, 8))),
            body,
            max(7, int(size * 0.8)),
            ink,
            "center",
        )
        y += size * 1.3
    if rng.random() < 0.7:
        r.rule(c, rng, m, y + size * 0.5, w - m)
    y += size * 2.5
    for n in [1, 0, *([4] * int(rng.integers(3, 6))), 0, 2]:
        if n:
            _line(
                r,
                c,
                rng,
                m,
                w - m,
                y + size,
                _words(r, rng, body, n + int(rng.integers(0, 3))),
                body,
                size,
                ink,
            )
        y += size * 1.5
    for _ in range(int(rng.integers(2, 5))):
        y = (
            r.paragraph(
                c,
                rng,
                m,
                y,
                w - m,
                h * 0.85,
                body,
                size,
                ink,
                int(rng.integers(2, 8)),
                justify=rng.random() < 0.5,
            )
            + size
        )
    _line(r, c, rng, m, w - m, y + size, [r.word(rng, body) + ","], body, size, ink)
    r.scribble(c, rng, m, y + size * 1.5, size * rng.uniform(6, 14), size * 2.5)
    y += size * 5
    for _ in range(int(rng.integers(1, 4))):
        _line(r, c, rng, m, w - m, y, _words(r, rng, body, int(rng.integers(1, 4))), body, size, ink)
        y += size * 1.4


def form(r, c, rng: np.random.Generator) -> None:
    """Sections of label/value fields with rules, boxed cells and check boxes (FUNSD-like business forms)."""
    w, h = c.size
    m = w * rng.uniform(0.04, 0.1)
    lab = r._pick_font(rng, r.plain)
    val = r._pick_font(rng, r.mono) if rng.random() < 0.5 else r._pick_font(rng, r.fonts)
    size = _size(rng, 8, 17)
    ink, vink = _ink(rng), _ink(rng)
    upper = rng.random() < 0.5
    y = h * rng.uniform(0.03, 0.08)
    ts = int(size * rng.uniform(1.3, 2.5))
    tf = _styled(r, rng, "bold", lab)
    _line(
        r,
        c,
        rng,
        m,
        w - m,
        y + ts,
        _words(r, rng, tf, int(rng.integers(1, 5)), True),
        tf,
        ts,
        ink,
        str(rng.choice(["left", "center"])),
    )
    y += ts * 1.8
    while y < h * 0.92:
        kind = rng.random()
        if kind < 0.15:  # section header, maybe on a shaded bar
            if rng.random() < 0.5:
                shade = int(rng.integers(160, 235))
                c.draw.rectangle([m, y, w - m, y + size * 1.7], fill=(shade,) * 3)
            _line(
                r,
                c,
                rng,
                m + size * 0.3,
                w - m,
                y + size * 1.3,
                _words(r, rng, tf, int(rng.integers(1, 5)), True),
                tf,
                size,
                ink,
            )
            y += size * 2.4
        elif kind < 0.55:  # a row of "Label: value" fields
            n = int(rng.integers(1, 4))
            fw = (w - 2 * m) / n
            base = y + size * 1.2
            for k in range(n):
                x0 = m + k * fw
                words = _words(r, rng, lab, int(rng.integers(1, 4)), upper)
                words[-1] += ":" if rng.random() < 0.7 else ""
                x = _line(r, c, rng, x0, x0 + fw * 0.6, base, words, lab, size, ink)
                if rng.random() < 0.5:
                    r.rule(c, rng, x, base + 2, x0 + fw - size, dashed=rng.random() < 0.2)
                if rng.random() < 0.75:
                    vs = max(7, int(size * rng.uniform(0.9, 1.3)))
                    _line(
                        r,
                        c,
                        rng,
                        x + size * 0.3,
                        x0 + fw - size,
                        base,
                        _words(r, rng, val, int(rng.integers(1, 5)), rng.random() < 0.3),
                        val,
                        vs,
                        vink,
                    )
            y += size * rng.uniform(1.8, 3.0)
        elif kind < 0.75:  # boxed cells: small label at the top-left, value below
            n = int(rng.integers(2, 5))
            fw, ch = (w - 2 * m) / n, size * 3.2
            for k in range(n):
                x0 = m + k * fw
                c.draw.rectangle([x0, y, x0 + fw, y + ch], outline=(0, 0, 0), width=1)
                ls = max(6, int(size * 0.75))
                _line(
                    r,
                    c,
                    rng,
                    x0 + 3,
                    x0 + fw - 3,
                    y + ls + 3,
                    _words(r, rng, lab, int(rng.integers(1, 4)), upper),
                    lab,
                    ls,
                    ink,
                )
                if rng.random() < 0.8:
                    _line(
                        r,
                        c,
                        rng,
                        x0 + 5,
                        x0 + fw - 5,
                        y + ch - size * 0.5,
                        _words(r, rng, val, int(rng.integers(1, 4))),
                        val,
                        size,
                        vink,
                    )
            y += ch + size * 0.6
        elif kind < 0.88:  # check boxes
            x, base = m, y + size * 1.2
            for _ in range(int(rng.integers(2, 6))):
                x = r.checkbox(c, rng, x, base, size)
                x = (
                    _line(
                        r,
                        c,
                        rng,
                        x,
                        w - m,
                        base,
                        _words(r, rng, lab, int(rng.integers(1, 3)), upper),
                        lab,
                        size,
                        ink,
                    )
                    + size * 1.5
                )
                if x > w - m - 5 * size:
                    break
            y += size * 2.2
        else:  # free text remarks
            y = (
                r.paragraph(
                    c,
                    rng,
                    m,
                    y,
                    w - m,
                    h * 0.95,
                    val if rng.random() < 0.5 else lab,
                    size,
                    vink,
                    int(rng.integers(1, 5)),
                )
                + size
            )
    if rng.random() < 0.4:
        r.scribble(c, rng, w * 0.55, h * 0.9, w * 0.25, size * 2)


def receipt(r, c, rng: np.random.Generator) -> None:
    """Shop receipt: centred header, items with right-aligned prices, totals, dashed rules (SROIE-like)."""
    w, h = c.size
    m = w * rng.uniform(0.04, 0.12)
    font = r._pick_font(rng, r.mono) if rng.random() < 0.7 else r._pick_font(rng, r.plain)
    size = _size(rng, 11, 24)
    ink = _ink(rng) if rng.random() < 0.3 else (0, 0, 0)
    upper = rng.random() < 0.85
    y = h * rng.uniform(0.02, 0.06)
    if rng.random() < 0.3:
        r.logo(c, rng, w / 2 - size * 2, y, size * 4)
        y += size * 4.5
    head = _styled(r, rng, "bold", font)
    for i in range(int(rng.integers(3, 8))):
        s = int(size * (rng.uniform(1.1, 1.8) if i == 0 else 1.0))
        _line(
            r,
            c,
            rng,
            m,
            w - m,
            y + s,
            _words(r, rng, head if i == 0 else font, int(rng.integers(1, 5)), upper),
            head if i == 0 else font,
            s,
            ink,
            "center",
        )
        y += s * rng.uniform(1.15, 1.5)
    lead = size * rng.uniform(1.2, 1.6)
    while y < h * 0.9:
        roll = rng.random()
        if roll < 0.12:
            r.rule(c, rng, m, y + lead / 2, w - m, dashed=rng.random() < 0.7)
            y += lead
            continue
        left = _words(r, rng, font, int(rng.integers(1, 5)), upper)
        right = [f"{rng.integers(0, 999)}.{rng.integers(0, 100):02d}"]
        if roll < 0.3:
            right = [str(int(rng.integers(1, 10))), *right]
        x = _line(r, c, rng, m, w * 0.65, y + size, left, font, size, ink)
        if rng.random() < 0.85 and x < w * 0.6:
            _line(r, c, rng, w * 0.6, w - m, y + size, right, font, size, ink, "right")
        y += lead
    if rng.random() < 0.3:
        r.barcode(c, rng, w * 0.2, y, w * 0.6, size * 2.5)


def table(r, c, rng: np.random.Generator) -> None:
    """A ruled (or unruled) grid with a header row; numbers right-aligned."""
    w, h = c.size
    m = w * rng.uniform(0.04, 0.1)
    font = r._pick_font(rng)
    size = _size(rng, 8, 16)
    ink = _ink(rng)
    y = h * 0.06
    tf = _styled(r, rng, "bold", font)
    _line(
        r,
        c,
        rng,
        m,
        w - m,
        y + size * 1.5,
        _words(r, rng, tf, int(rng.integers(2, 6))),
        tf,
        int(size * 1.5),
        ink,
    )
    y += size * 3
    while y < h * 0.85:
        ncol, nrow = int(rng.integers(2, 8)), int(rng.integers(3, 25))
        cw, rh = (w - 2 * m) / ncol, size * rng.uniform(1.6, 2.4)
        lines = rng.choice(["all", "rows", "none"])
        for i in range(nrow):
            if y + rh > h * 0.95:
                break
            if i == 0 and rng.random() < 0.5:
                c.draw.rectangle([m, y, w - m, y + rh], fill=(int(rng.integers(170, 235)),) * 3)
            for j in range(ncol):
                x0 = m + j * cw
                num = j > 0 and rng.random() < 0.6 and i > 0
                words = (
                    [f"{rng.integers(0, 99999):,}"] if num else _words(r, rng, font, int(rng.integers(1, 3)))
                )
                _line(
                    r,
                    c,
                    rng,
                    x0 + size * 0.4,
                    x0 + cw - size * 0.4,
                    y + rh * 0.7,
                    words,
                    tf if i == 0 else font,
                    size,
                    ink,
                    "right" if num else "left",
                )
                if lines == "all":
                    c.draw.line([(x0, y), (x0, y + rh)], fill=(0, 0, 0))
            if lines != "none":
                c.draw.line([(m, y + rh), (w - m, y + rh)], fill=(0, 0, 0))
            y += rh
        y += size * 3


def invoice(r, c, rng: np.random.Generator) -> None:
    """Company header, INVOICE title, key-value block, item table, totals."""
    w, h = c.size
    m = w * rng.uniform(0.05, 0.1)
    font = r._pick_font(rng, r.plain)
    size = _size(rng, 8, 15)
    ink = _ink(rng)
    bold = _styled(r, rng, "bold", font)
    y = h * 0.05
    _line(
        r, c, rng, m, w / 2, y + size * 2, _words(r, rng, bold, int(rng.integers(1, 4))), bold, size * 2, ink
    )
    _line(
        r,
        c,
        rng,
        w / 2,
        w - m,
        y + size * 2.5,
        ["INVOICE" if rng.random() < 0.5 else r.word(rng, bold, True)],
        bold,
        int(size * 2.6),
        ink,
        "right",
    )
    y += size * 4
    for _ in range(int(rng.integers(3, 7))):
        _line(r, c, rng, m, w / 2, y + size, _words(r, rng, font, int(rng.integers(2, 6))), font, size, ink)
        k = _words(r, rng, bold, 1, True)
        _line(r, c, rng, w * 0.6, w - m, y + size, [k[0] + ":", r.word(rng, font)], font, size, ink, "right")
        y += size * 1.5
    y += size * 2
    cols = [0.0, 0.55, 0.7, 0.85]
    for i in range(int(rng.integers(4, 18))):
        if y > h * 0.85:
            break
        for j, cx in enumerate(cols):
            x0, x1 = m + cx * (w - 2 * m), m + (cols[j + 1] if j + 1 < len(cols) else 1.0) * (w - 2 * m)
            price = f"{rng.integers(1, 9999)}.{rng.integers(0, 100):02d}"
            words = _words(r, rng, font, int(rng.integers(1, 5))) if j == 0 else [price]
            _line(
                r,
                c,
                rng,
                x0 + 4,
                x1 - 4,
                y + size * 1.3,
                words,
                bold if i == 0 else font,
                size,
                ink,
                "left" if j == 0 else "right",
            )
        c.draw.line([(m, y + size * 1.9), (w - m, y + size * 1.9)], fill=(0, 0, 0))
        y += size * 2
    for label in ("SUBTOTAL", "TAX", "TOTAL"):
        amount = f"{rng.integers(1, 99999)}.{rng.integers(0, 100):02d}"
        _line(r, c, rng, w * 0.5, w - m, y + size * 1.5, [label, amount], bold, size, ink, "right")
        y += size * 1.8


def slide(r, c, rng: np.random.Generator) -> None:
    """Presentation slide: big title, bullet lines, coloured background."""
    w, h = c.size
    bg = tuple(int(v) for v in rng.integers(200, 256, 3))
    c.draw.rectangle([0, 0, w, h], fill=bg)
    m = w * 0.06
    tf = _styled(r, rng, "bold")
    ts = _size(rng, 30, 90)
    ink = _ink(rng)
    _line(r, c, rng, m, w - m, h * 0.08 + ts, _words(r, rng, tf, int(rng.integers(1, 5))), tf, ts, ink)
    y = h * 0.1 + ts * 1.6
    font = r._pick_font(rng, r.plain)
    size = _size(rng, 16, 40)
    while y < h * 0.88:
        c.draw.ellipse([m, y + size * 0.35, m + size * 0.35, y + size * 0.7], fill=ink)
        _line(
            r,
            c,
            rng,
            m + size,
            w - m,
            y + size * 0.8,
            _words(r, rng, font, int(rng.integers(1, 8))),
            font,
            size,
            ink,
        )
        y += size * rng.uniform(1.4, 2.2)
