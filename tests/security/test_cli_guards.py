"""``vision ocr`` on a folder holding a PDF bomb: the bomb is reported and skipped, the rest is read;
``--resume`` then skips what is done."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from _hostile import png_bytes
from bombs import pdf_forms_bomb

from vision.app.cli import build_parser
from vision.app.cli import ocr as ocr_cli


def _run(argv: list[str], predictor: Any) -> int:
    return ocr_cli.run(build_parser().parse_args(["ocr", *argv, "--no-progress"]), predictor=predictor)


def test_a_pdf_bomb_in_a_folder_is_reported_and_skipped(tmp_path: Path, stub: Any, capsys: Any) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "bomb.pdf").write_bytes(pdf_forms_bomb(depth=5, fanout=10))
    (folder / "page.png").write_bytes(png_bytes())
    out = tmp_path / "out"
    start = time.perf_counter()
    code = _run([str(folder), "-o", f"{out}/", "-f", "json", "--pdf-timeout", "1"], stub)
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err
    assert code == 1 and elapsed < 15
    assert "bomb.pdf" in err and "pdf_timeout_s" in err
    assert (out / "page.png.json").is_file() and not (out / "bomb.pdf.json").exists()
    (folder / "bomb.pdf").unlink()
    before = (out / "page.png.json").stat().st_mtime_ns
    assert _run([str(folder), "-o", f"{out}/", "-f", "json", "--resume"], stub) == 0
    assert "1 input(s) already have their output" in capsys.readouterr().err
    assert (out / "page.png.json").stat().st_mtime_ns == before
