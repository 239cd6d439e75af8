"""``vision info`` and the shared limit options of every command."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from vision.app.cli import main
from vision.app.cli._common import add_limit_arguments, limits_from_args
from vision.settings import DEFAULT_LIMITS


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A two-page PDF (page 0 with text, page 1 scanned), a 2-page TIFF, a 1 s video, a broken PNG."""
    import numpy as np
    import torch
    from fpdf import FPDF
    from torchcodec.encoders import VideoEncoder

    pdf = FPDF(unit="pt", format=(300, 200))
    pdf.set_font("helvetica", size=20)
    pdf.add_page()
    pdf.text(20, 50, "Born digital")
    pdf.add_page()
    pdf.image(Image.fromarray(np.full((10, 10, 3), 50, np.uint8)), x=10, y=10, w=100)
    paths = {
        "pdf": tmp_path / "doc.pdf",
        "tiff": tmp_path / "scan.tif",
        "video": tmp_path / "clip.mp4",
        "broken": tmp_path / "broken.png",
    }
    pdf.output(str(paths["pdf"]))
    page = Image.new("RGB", (40, 30), "white")
    page.save(paths["tiff"], save_all=True, append_images=[page.convert("L")], dpi=(300, 300))
    VideoEncoder(torch.zeros(5, 3, 32, 48, dtype=torch.uint8), frame_rate=5).to_file(str(paths["video"]))
    buf = io.BytesIO()
    page.save(buf, "PNG")
    paths["broken"].write_bytes(buf.getvalue()[:40])
    return paths


def test_text_report(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(files["pdf"]), str(files["tiff"]), str(files["video"])]) == 0
    out = capsys.readouterr().out
    assert f"{files['pdf']}: pdf, 2 of 2 pages, rendered at 144 dpi" in out
    assert "page 0: 300x200 pt -> 600x400 px, text layer: yes" in out
    assert "page 1: 300x200 pt -> 600x400 px, text layer: no" in out
    assert (
        f"{files['tiff']}: image, 2 pages" in out
        and "TIFF 40x30 RGB, 300 dpi" in out
        and "TIFF 40x30 L" in out
    )
    assert f"{files['video']}: video (h264), 5 frames, 48x32, 5 fps, 1.00 s" in out


def test_json_report_and_failures_do_not_stop_the_rest(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["info", "--json", str(files["broken"]), str(files["pdf"]), str(files["video"]), "missing.png"]
    )
    assert code == 1
    infos = json.loads(capsys.readouterr().out)
    assert [i["source"] for i in infos] == [
        str(files["broken"]),
        str(files["pdf"]),
        str(files["video"]),
        "missing.png",
    ]
    assert infos[0]["error"]["type"] == "CorruptFile" and str(files["broken"]) in infos[0]["error"]["message"]
    assert infos[3]["error"] == {"type": "UnreadableFile", "message": "missing.png: no such file"}
    assert [p["has_text"] for p in infos[1]["pages"]] == [True, False] and infos[1]["page_count"] == 2
    assert (
        infos[2]["kind"] == "video"
        and infos[2]["frames"] == 5
        and (infos[2]["width"], infos[2]["height"]) == (48, 32)
    )


def test_limit_options_reach_the_readers(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "--max-pages", "1", str(files["pdf"])]) == 1
    assert "2 pages selected, over the limit of 1 (max_pages" in capsys.readouterr().err
    assert main(["info", "--max-frames", "4", "--json", str(files["video"])]) == 1
    assert json.loads(capsys.readouterr().out)[0]["error"]["type"] == "LimitExceeded"
    assert main(["info", "--max-pixels", "1k", str(files["tiff"])]) == 1
    assert main(["info", "--max-bytes", "10", str(files["tiff"])]) == 1
    assert "max_bytes" in capsys.readouterr().err


def test_limit_arguments_parse_into_limits() -> None:
    parser = argparse.ArgumentParser()
    add_limit_arguments(parser)
    args = parser.parse_args(["--max-bytes", "2M", "--max-pages", "7"])
    limits = limits_from_args(args)
    assert limits.max_bytes == 2_000_000 and limits.max_pages == 7
    assert limits.max_pixels == DEFAULT_LIMITS.max_pixels and limits.max_frames == DEFAULT_LIMITS.max_frames
    assert limits_from_args(parser.parse_args([])) == DEFAULT_LIMITS
    assert limits_from_args(argparse.Namespace()) == DEFAULT_LIMITS  # commands without the options
    for bad in (["--max-pages", "0"], ["--max-bytes", "lots"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
