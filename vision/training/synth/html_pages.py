"""Multi-column article pages drawn by headless Chromium from generated HTML, with every word's box, its
block's kind and the true reading order read from the DOM.

A page (A4 at 150 dpi, 1240 x 1754 px) has a running head and a folio, a title and an author line across
the page, then CSS columns (``column-count`` 1 to 3, gutters 3 to 8 mm, columns filled top to bottom):
numbered headings, paragraphs (justified or ragged), bulleted lists, display formulas (centred, italic
single letters, operators, an equation number) and figures (a drawn chart or photo-like block with a
``Figure N.`` caption under it). Fonts and sizes vary. The DOM order is the reading order (CSS columns flow
in it); each word is a ``<span>``, so its box is the browser's; words that overflow the page are left out.

Used by ``benchmarks/reading_order.py --html N`` (reading order on 2- and 3-column pages) and
``benchmarks/structure_kinds.py`` (figure and formula kinds).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

import numpy as np

from vision.training.synth.html_tables import CHROMIUM, FONTS

__all__ = ["HtmlPage", "random_article", "render_pages"]

WIDTH, HEIGHT = 1240, 1754  # A4 at 150 dpi
_WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at which but "
          "have an they you were her she there been one all we their has would when if so no will more out up "
          "into do any your what time some could them other than then now only its over also after first "
          "model data method result value system process analysis sample figure section table measure "
          "page column order structure layout reading text block region learning network training").split()
_GREEK = "\u03b1\u03b2\u03b3\u03b4\u03bb\u03bc\u03c3\u03b8\u03c6\u03c9"


@dataclass
class HtmlPage:
    """A drawn page: ``image (H, W, 3) uint8``; ``words`` as ``(text, (x0, y0, x1, y1) pixels, kind)`` in
    true reading order; ``figures`` the pixel boxes of the figures' drawings; ``columns`` its column count."""

    image: np.ndarray
    words: list[tuple[str, tuple[float, float, float, float], str]]
    figures: list[tuple[float, float, float, float]]
    columns: int


def _sentence(rng: np.random.Generator, n: int) -> str:
    text = " ".join(rng.choice(_WORDS, n))
    return text[:1].upper() + text[1:] + "."


def _spans(text: str) -> str:
    return " ".join(f"<span class=w>{escape(t)}</span>" for t in text.split())


def _formula(rng: np.random.Generator, number: int) -> str:
    """A display formula as word spans: italic letters, operators, sub/superscripts, an equation number."""
    letters = list("xyzabcnkfgtuv") + list(_GREEK)
    terms = []
    for _ in range(int(rng.integers(2, 6))):
        v = str(rng.choice(letters))
        r = rng.random()
        if r < 0.3:
            terms.append(f"<i>{v}</i><sub>{rng.choice(list('ijkn0123'))}</sub>")
        elif r < 0.55:
            terms.append(f"<i>{v}</i><sup>{int(rng.integers(2, 4))}</sup>")
        elif r < 0.7:
            terms.append(f"{rng.choice(['sin', 'cos', 'log', 'exp'])}(<i>{v}</i>)")
        elif r < 0.8:
            terms.append(f"\u2211<sub><i>k</i></sub> <i>{v}</i><sub><i>k</i></sub>")
        else:
            terms.append(f"<i>{v}</i>")
    ops = ["+", "\u2212", "=", "\u00b7", "\u2264", "/"]
    parts = [f"<i>{rng.choice(letters)}</i>", "="]
    for k, t in enumerate(terms):
        if k:
            parts.append(str(rng.choice(ops[:2] + ops[3:])))
        parts.append(t)
    body = " ".join(f"<span class=w>{p}</span>" for p in parts)
    return f"<div class=eq data-kind=formula>{body}<span class='w num'>({number})</span></div>"


def _figure(rng: np.random.Generator, number: int) -> str:
    height = int(rng.integers(140, 320))
    if rng.random() < 0.5:  # a bar chart
        bars = "".join(f"<div style='flex:1;margin:0 3px;align-self:flex-end;height:{rng.integers(15, 100)}%;"
                       f"background:hsl({rng.integers(0, 360)},55%,45%)'></div>" for _ in range(int(rng.integers(4, 12))))
        art = f"<div class=art style='height:{height}px;display:flex;border-left:2px solid #000;border-bottom:2px solid #000'>{bars}</div>"
    else:  # a photo-like gradient
        a, b = rng.integers(0, 360, 2)
        art = (f"<div class=art style='height:{height}px;background:linear-gradient({rng.integers(0, 180)}deg,"
               f"hsl({a},50%,35%),hsl({b},60%,70%))'></div>")
    caption = f"<span class=w>Figure</span> <span class=w>{number}.</span> " + _spans(_sentence(rng, int(rng.integers(4, 16))))
    return f"<figure data-kind=figure>{art}<figcaption data-kind=caption>{caption}</figcaption></figure>"


def random_article(rng: np.random.Generator, columns: int) -> str:
    """The HTML of one article page with ``columns`` columns (see the module docstring)."""
    font = str(rng.choice(FONTS))
    size = int(rng.integers(17, 23))
    gutter = int(rng.integers(18, 48))  # 3 to 8 mm at 150 dpi
    justify = "justify" if rng.random() < 0.6 else "left"
    blocks = []
    n_fig = n_eq = 0
    for s in range(1, int(rng.integers(6, 10)) * columns + 1):
        blocks.append(f"<h2 data-kind=heading>{_spans(f'{s} ' + _sentence(rng, int(rng.integers(1, 5)))[:-1])}</h2>")
        for _ in range(int(rng.integers(1, 4))):
            r = rng.random()
            if r < 0.12:
                items = "".join(f"<li data-kind=list_item><span class=w>\u2022</span> {_spans(_sentence(rng, int(rng.integers(3, 14))))}</li>"
                                for _ in range(int(rng.integers(2, 5))))
                blocks.append(f"<ul>{items}</ul>")
            elif r < 0.27:
                n_eq += 1
                blocks.append(_formula(rng, n_eq))
            elif r < 0.37:
                n_fig += 1
                blocks.append(_figure(rng, n_fig))
            else:
                text = " ".join(_sentence(rng, int(rng.integers(5, 18))) for _ in range(int(rng.integers(2, 7))))
                blocks.append(f"<p data-kind=paragraph>{_spans(text)}</p>")
    css = (f"body{{margin:0;background:#fff}}#page{{position:relative;width:{WIDTH}px;height:{HEIGHT}px;overflow:hidden;"
           f"font-family:'{font}';font-size:{size}px;line-height:1.3;color:#000}}"
           f"#head,#foot{{position:absolute;left:118px;right:118px;font-size:{round(size * 0.8)}px}}"
           f"#head{{top:50px}}#foot{{bottom:50px;text-align:center}}"
           f"#front{{position:absolute;top:118px;left:118px;right:118px}}"
           f"h1{{font-size:{round(size * 1.9)}px;margin:0 0 10px;text-align:center}}#authors{{text-align:center;margin-bottom:24px}}"
           f"#cols{{overflow:hidden;column-count:{columns};column-gap:{gutter}px;column-fill:auto;height:{{h}}px;text-align:{justify}}}"
           f"h2{{font-size:{round(size * 1.2)}px;margin:10px 0 6px}}p{{margin:0 0 8px}}ul{{margin:0 0 8px;padding-left:18px;list-style:none}}"
           f".eq{{text-align:center;margin:8px 0}}.eq .num{{float:right}}figure{{margin:8px 0;break-inside:avoid}}"
           f"figcaption{{font-size:{round(size * 0.9)}px;margin-top:6px}}")
    title = _spans(_sentence(rng, int(rng.integers(3, 9)))[:-1])
    authors = _spans(" ".join(f"{rng.choice(list('ABCDEFGHJKLMNPRS'))}. {str(rng.choice(_WORDS)).title()}son" for _ in range(int(rng.integers(2, 5)))))
    head = _spans(f"Journal of {str(rng.choice(_WORDS)).title()} Studies {int(rng.integers(1, 40))} ({int(rng.integers(1990, 2026))})")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{css}</style></head><body><div id=page>"
            f"<div id=head data-kind=page_header>{head}</div>"
            f"<div id=front><h1 data-kind=title>{title}</h1><div id=authors data-kind=paragraph>{authors}</div>"
            f"<div id=cols>{''.join(blocks)}</div></div>"
            f"<div id=foot data-kind=page_footer><span class=w>{int(rng.integers(1, 400))}</span></div></div></body></html>")


_READ = """() => {
  const front = document.getElementById('front'), cols = document.getElementById('cols');
  cols.style.height = (1754 - 130 - cols.getBoundingClientRect().top) + 'px';
  const right = cols.getBoundingClientRect().right, bottom = 1754 - 40;
  const words = Array.from(document.querySelectorAll('.w')).map(s => {
    const b = s.getBoundingClientRect(), k = s.closest('[data-kind]');
    return [s.textContent, [b.left, b.top, b.right, b.bottom], k ? k.dataset.kind : 'paragraph'];
  }).filter(w => w[1][2] <= right + 2 && w[1][3] <= bottom && w[1][2] > w[1][0]);
  const figs = Array.from(document.querySelectorAll('figure .art')).map(a => {
    const b = a.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom];
  }).filter(b => b[2] <= right + 2 && b[3] <= bottom);
  return [words, figs];
}"""


def render_pages(htmls: list[str], columns: list[int]) -> list[HtmlPage]:
    """Draw each page with Chromium (Playwright); see the module docstring."""
    import io

    from PIL import Image
    from playwright.sync_api import sync_playwright

    pages = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--font-render-hinting=none"])
        try:
            tab = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
            for html, n in zip(htmls, columns):
                tab.set_content(html.replace("{h}", "1000"))
                words, figs = tab.evaluate(_READ)
                png = tab.locator("#page").screenshot()
                image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
                pages.append(HtmlPage(image, [(t, tuple(b), k) for t, b, k in words], [tuple(f) for f in figs], n))
        finally:
            browser.close()
    return pages
