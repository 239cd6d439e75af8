"""Field layouts: business forms (label/value fields, boxes, check boxes) and invoices."""

from __future__ import annotations

import numpy as np

from vision.training.synth.page_layouts._draw import _ink, _line, _size, _styled, _words


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
