"""Table sets drawn by headless Chromium from generated HTML, with the DOM's cell structure as ground truth.

Each table is random HTML: 3 to 7 columns, 4 to 14 body rows, one header row or a two-level header (a
spanning group cell over sub-columns, the first header cell spanning both rows), sometimes section rows
(one cell across the table), a first-column cell spanning several rows, empty cells; numbers, ranges,
percentages and p-values beside words. Styles vary: font family (the fonts Chromium finds: DejaVu, URW
Nimbus, C059, P052, URW Bookman...), size 11-17 px, rules (a full grid, top/header/bottom rules only, none,
or shaded rows), cell padding, alignment, bold or plain headers. Text sits at the top of its cell, or
where ``--valign`` puts it (``middle``: a label spanning rows is centred across them).

Chromium (``/usr/bin/chromium``, through Playwright) draws each table; its screenshot (the table plus a
small margin) is the image. The truth is written in the format ``vision eval tables`` reads (the layout of
``tables_dev``): ``index.json`` with ``"kind": "table"``, ``images/<id>.png``, ``gt/<id>.json`` =
``{"id", "image", "html", "structure_tokens", "cells", "style"}``: the HTML (header rows in ``<thead>``,
``colspan``/``rowspan`` as drawn), PubTabNet structure tokens, and each non-empty cell's characters with
the box of its text as laid out by the browser (pixels of the image).

    python -m vision.training.synth.html_tables --out /tmp/tables_html --count 60 --seed 0
    vision eval tables --data /tmp/tables_html

These sets are for measuring (held out from any rule tuning on ``tables_dev``) and for training.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from html import escape
from pathlib import Path

import numpy as np

__all__ = ["CHROMIUM", "FONTS", "TableSpec", "random_table", "render_tables", "write_table_set"]

CHROMIUM = "/usr/bin/chromium"
FONTS = ["DejaVu Sans", "DejaVu Serif", "Nimbus Sans", "Nimbus Roman", "Nimbus Sans Narrow", "C059", "P052",
         "URW Bookman", "DejaVu Sans Condensed", "URW Gothic"]
_WORDS = ("age sex male female total mean median group control treated baseline week month year dose "
          "patients cases rate ratio score index level weight height income region north south east west "
          "urban rural sample model test train accuracy error time cost price volume growth share sales "
          "yes no low high normal severe mild other unknown first second third before after change").split()
_RULES = ("grid", "booktabs", "none", "shaded")


@dataclass
class TableSpec:
    """A table: ``rows`` of cells ``(text, colspan, rowspan)`` as in HTML (cells covered by a span left
    out), ``header`` rows in ``<thead>``; ``style`` the CSS choices."""

    rows: list[list[tuple[str, int, int]]]
    header: int
    style: dict

    def truth_html(self) -> str:
        """``<html><body><table><thead>...</thead><tbody>...</tbody></table></body></html>``."""

        def tr(row: list[tuple[str, int, int]]) -> str:
            cells = []
            for text, cs, rs in row:
                span = (f' colspan="{cs}"' if cs > 1 else "") + (f' rowspan="{rs}"' if rs > 1 else "")
                cells.append(f"<td{span}>{escape(text)}</td>")
            return "<tr>" + "".join(cells) + "</tr>"

        head = "".join(tr(r) for r in self.rows[: self.header])
        body = "".join(tr(r) for r in self.rows[self.header :])
        return f"<html><body><table><thead>{head}</thead><tbody>{body}</tbody></table></body></html>"

    def structure_tokens(self) -> list[str]:
        """PubTabNet structure tokens (``<td``, `` colspan="2"``, ``>`` for a spanning cell)."""
        out: list[str] = []
        for part, rows in (("thead", self.rows[: self.header]), ("tbody", self.rows[self.header :])):
            out.append(f"<{part}>")
            for row in rows:
                out.append("<tr>")
                for _, cs, rs in row:
                    if cs == 1 and rs == 1:
                        out += ["<td>", "</td>"]
                    else:
                        out += ["<td"] + ([f' colspan="{cs}"'] if cs > 1 else []) + ([f' rowspan="{rs}"'] if rs > 1 else []) + [">", "</td>"]
                out.append("</tr>")
            out.append(f"</{part}>")
        return out


def _phrase(rng: np.random.Generator, n: tuple[int, int]) -> str:
    text = " ".join(rng.choice(_WORDS, int(rng.integers(*n))))
    return text[:1].upper() + text[1:]


def _value(rng: np.random.Generator, kind: int) -> str:
    if rng.random() < 0.08:
        return ""
    x = float(rng.lognormal(2.0, 1.5))
    if kind == 0:
        return f"{x:.{int(rng.integers(0, 3))}f}"
    if kind == 1:
        return f"{int(x)} ({rng.uniform(0, 100):.1f})"
    if kind == 2:
        lo = x * rng.uniform(0.5, 0.95)
        return f"{lo:.2f}\u2013{x:.2f}"
    if kind == 3:
        return "<0.001" if rng.random() < 0.2 else f"{rng.uniform(0, 1):.3f}"
    if kind == 4:
        return f"{rng.uniform(0, 100):.1f}%"
    if kind == 5:
        return f"{x:.1f} \u00b1 {x * rng.uniform(0.05, 0.4):.1f}"
    return str(rng.choice(_WORDS))


def random_table(rng: np.random.Generator) -> TableSpec:
    """A random table (see the module docstring)."""
    n_cols = int(rng.integers(3, 8))
    n_body = int(rng.integers(4, 15))
    kinds = [int(rng.integers(0, 7)) for _ in range(n_cols)]
    rows: list[list[tuple[str, int, int]]] = []
    if n_cols >= 4 and rng.random() < 0.35:  # two-level header: groups over sub-columns
        first = [(_phrase(rng, (1, 3)), 1, 2)]
        second: list[tuple[str, int, int]] = []
        c = 1
        while c < n_cols:
            width = int(min(rng.integers(1, 4), n_cols - c))
            if width == 1:
                first.append((_phrase(rng, (1, 3)), 1, 2))
            else:
                first.append((_phrase(rng, (1, 3)), width, 1))
                second += [(_phrase(rng, (1, 2)), 1, 1) for _ in range(width)]
            c += width
        rows += [first, second] if second else [[(t, cs, 1) for t, cs, _ in first]]
    else:
        rows.append([(_phrase(rng, (1, 4)), 1, 1) for _ in range(n_cols)])
    header = len(rows)
    sections = rng.random() < 0.25
    grouped = not sections and rng.random() < 0.25
    r = 0
    while r < n_body:
        if sections and (r == 0 or rng.random() < 0.2):
            rows.append([(_phrase(rng, (1, 4)), n_cols, 1)])
        if grouped and rng.random() < 0.5 and r + 2 <= n_body:
            span = int(min(rng.integers(2, 4), n_body - r))
            rows.append([(_phrase(rng, (1, 3)), 1, span)] + [(_value(rng, k), 1, 1) for k in kinds[1:]])
            rows += [[(_value(rng, k), 1, 1) for k in kinds[1:]] for _ in range(span - 1)]
            r += span
            continue
        label = _phrase(rng, (1, 5)) if rng.random() > 0.05 else ""
        rows.append([(label, 1, 1)] + [(_value(rng, k), 1, 1) for k in kinds[1:]])
        r += 1
    style = {
        "font": str(rng.choice(FONTS)),
        "size": int(rng.integers(11, 18)),
        "rules": str(rng.choice(_RULES)),
        "pad_x": int(rng.integers(4, 16)),
        "pad_y": int(rng.integers(1, 6)),
        "align": str(rng.choice(["left", "center", "right"])),
        "bold_head": bool(rng.random() < 0.6),
    }
    return TableSpec(rows, header, style)


def _page_html(spec: TableSpec) -> str:
    s = spec.style
    border = {"grid": "td{border:1px solid #222}",
              "booktabs": "table{border-top:2px solid #000;border-bottom:2px solid #000}"
                          "thead tr:last-child td{border-bottom:1px solid #000}",
              "none": "", "shaded": "tbody tr:nth-child(odd){background:#e4e4e4}"}[s["rules"]]
    css = (f"body{{margin:0;background:#fff}}#wrap{{display:inline-block;padding:10px}}"
           f"table{{border-collapse:collapse;font-family:'{s['font']}';font-size:{s['size']}px;color:#000}}"
           f"td{{padding:{s['pad_y']}px {s['pad_x']}px;text-align:{s['align']};vertical-align:{s.get('valign', 'top')}}}"
           f"td:first-child{{text-align:left}}thead td{{font-weight:{'bold' if s['bold_head'] else 'normal'}}}"
           + border)
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{css}</style></head><body><div id='wrap'>" + \
        spec.truth_html()[len("<html><body>"): -len("</body></html>")] + "</div></body></html>"


_CELL_BOXES = """() => {
  const wrap = document.getElementById('wrap').getBoundingClientRect();
  return Array.from(document.querySelectorAll('td')).map(td => {
    const r = document.createRange(); r.selectNodeContents(td); const b = r.getBoundingClientRect();
    return td.textContent.length ? [b.left - wrap.left, b.top - wrap.top, b.right - wrap.left, b.bottom - wrap.top] : null;
  });
}"""


def render_tables(specs: list[TableSpec], out_dir: Path, ids: list[str]) -> list[list]:
    """Draw each table with Chromium into ``out_dir/<id>.png``; returns each table's cell text boxes."""
    from playwright.sync_api import sync_playwright

    boxes = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--font-render-hinting=none"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1200}, device_scale_factor=1)
            for spec, ident in zip(specs, ids):
                page.set_content(_page_html(spec))
                page.locator("#wrap").screenshot(path=str(out_dir / f"{ident}.png"))
                boxes.append(page.evaluate(_CELL_BOXES))
        finally:
            browser.close()
    return boxes


def write_table_set(out: str | Path, count: int, seed: int = 0, valign: str = "top") -> Path:
    """Write a table set of ``count`` tables (seeded) under ``out`` in the layout of ``tables_dev``; cell
    text is set at the ``valign`` (CSS ``vertical-align``) of the cell, which draws nothing from the seed."""
    out = Path(out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "gt").mkdir(exist_ok=True)
    rng = np.random.default_rng(seed)
    specs = [random_table(rng) for _ in range(count)]
    for spec in specs if valign != "top" else []:
        spec.style["valign"] = valign
    ids = [f"html_{seed}_{k:04d}" for k in range(count)]
    boxes = render_tables(specs, out / "images", ids)
    for spec, ident, cell_boxes in zip(specs, ids, boxes):
        texts = [t for row in spec.rows for t, _, _ in row]
        cells = [{"tokens": list(t), **({"bbox": [round(v) for v in b]} if b else {})}
                 for t, b in zip(texts, cell_boxes)]
        gt = {"id": ident, "image": f"images/{ident}.png", "html": spec.truth_html(),
              "structure_tokens": spec.structure_tokens(), "cells": cells, "style": spec.style,
              "source": {"generator": "vision.training.synth.html_tables", "seed": seed}}
        (out / "gt" / f"{ident}.json").write_text(json.dumps(gt, ensure_ascii=False))
    (out / "index.json").write_text(json.dumps({"set": out.name, "kind": "table", "ids": ids}))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write a table set drawn by headless Chromium.")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--valign", choices=("top", "middle", "bottom"), default="top",
                        help="vertical place of the text in its cell (top)")
    args = parser.parse_args(argv)
    print(write_table_set(args.out, args.count, args.seed, args.valign))


if __name__ == "__main__":
    main()
