"""Cost of rendering PDFs in a sandboxed worker process against rendering them in this process.

    python benchmarks/pdf_sandbox.py [--docs 20] [--pages 1 5] [--dpi 144] [--out FILE]

For each page count, ``--docs`` ordinary text PDFs are opened and every page rendered, once with
``Limits(pdf_sandbox=False)`` (PDFium in this process) and once with the default sandbox (one worker process
per document, forked from a preloaded forkserver), alternating, after one warm-up of each. Prints the
median seconds per document for both and their ratio, and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

from vision.io import DocumentFile
from vision.io.pdf_worker import start_forkserver
from vision.settings import Limits

REPO = Path(__file__).resolve().parents[1]


def text_pdf(pages: int) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for i in range(pages):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Page {i + 1}. " + "Lorem ipsum dolor sit amet, consectetur adipiscing. " * 40)
    return bytes(pdf.output())


def read_all(data: bytes, dpi: float, limits: Limits) -> float:
    start = time.perf_counter()
    with DocumentFile.from_pdf(data, dpi=dpi, limits=limits) as doc:
        for page in doc:
            assert page.image.ndim == 3
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20)
    parser.add_argument("--pages", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--dpi", type=float, default=144.0)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "pdf_sandbox.json")
    args = parser.parse_args()
    start_forkserver()
    local, sandbox = Limits(pdf_sandbox=False), Limits()
    rows = []
    for pages in args.pages:
        data = text_pdf(pages)
        read_all(data, args.dpi, local), read_all(data, args.dpi, sandbox)  # warm-up
        times: dict[str, list[float]] = {"in_process": [], "sandbox": []}
        for _ in range(args.docs):
            times["in_process"].append(read_all(data, args.dpi, local))
            times["sandbox"].append(read_all(data, args.dpi, sandbox))
        a, b = statistics.median(times["in_process"]), statistics.median(times["sandbox"])
        rows.append(
            {
                "pages": pages,
                "in_process_s": round(a, 4),
                "sandbox_s": round(b, 4),
                "ratio": round(b / a, 2),
                "overhead_ms": round((b - a) * 1000, 1),
            }
        )
    print(f"{'pages':>5} {'in-process s':>13} {'sandbox s':>10} {'ratio':>6} {'overhead ms':>12}")
    for r in rows:
        print(
            f"{r['pages']:>5} {r['in_process_s']:>13} {r['sandbox_s']:>10} {r['ratio']:>6} "
            f"{r['overhead_ms']:>12}"
        )
    result = {
        "benchmark": "pdf_sandbox",
        "machine": platform.node(),
        "dpi": args.dpi,
        "docs": args.docs,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
