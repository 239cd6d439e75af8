"""Running-text layouts: articles, letters and presentation slides."""

from __future__ import annotations

import numpy as np

from vision.training.synth.page_layouts._draw import _ink, _line, _size, _styled, _words


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
