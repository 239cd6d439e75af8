"""Column layouts: shop receipts and ruled tables."""

from __future__ import annotations

import numpy as np

from vision.training.synth.page_layouts._draw import _ink, _line, _size, _styled, _words


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
            if r.separator_rows and rng.random() < r.separator_rows:  # "*****": a printed rule, not a word
                r.separator(c, rng, m, y + size, w - m, font, size, ink)
            else:
                r.rule(c, rng, m, y + lead / 2, w - m, dashed=rng.random() < 0.7)
            y += lead
            continue
        left = _words(r, rng, font, int(rng.integers(1, 5)), upper)
        right = [f"{rng.integers(0, 999)}.{rng.integers(0, 100):02d}"]
        if r.dash_prices and rng.random() < r.dash_prices:  # "500. —": whole amount, its dash a word alone
            right = [f"{int(np.exp(rng.uniform(0, np.log(5000))))}.", "—" if rng.random() < 0.6 else "–"]
        if roll < 0.3:
            right = [str(int(rng.integers(1, 10))), *right]
        if r.lone_quantities and rng.random() < r.lone_quantities:  # "1  EDAMAME": the quantity alone first
            qty = str(int(rng.integers(1, 10))) if rng.random() < 0.85 else str(int(rng.integers(10, 30)))
            _line(r, c, rng, m, m + size * 1.5, y + size, [qty], font, size, ink)
            x = _line(r, c, rng, m + size * rng.uniform(1.6, 2.6), w * 0.65, y + size, left, font, size, ink)
        else:
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
