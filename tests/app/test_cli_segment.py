"""``vision segment``: prompts from the command line, PNG masks and JSON out, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vision.app.cli import main
from vision.models.segmentation.sam import build_sam


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("segment")
    torch.manual_seed(0)
    ckpt = root / "sam_test.pth"
    torch.save(build_sam("test").state_dict(), ckpt)  # the official layout: a plain state dict
    img = np.full((60, 80, 3), 20, np.uint8)
    img[10:50, 20:60] = 220
    image = root / "page.png"
    Image.fromarray(img).save(image)
    return image, ckpt


def _run(files, tmp_path: Path, *prompt: str) -> dict:
    image, ckpt = files
    out = tmp_path / "out"
    code = main(["segment", str(image), *prompt, "--checkpoint", str(ckpt), "--model-type", "test", "-o", str(out),
                 "--device", "cpu"])
    assert code == 0
    meta = json.loads((out / "masks.json").read_text())
    for rec in meta["masks"]:
        mask = np.asarray(Image.open(out / rec["file"]))
        assert mask.shape == (60, 80) and set(np.unique(mask)) <= {0, 255}
        assert rec["area"] == int((mask > 0).sum())
    return meta


def test_point(files, tmp_path: Path) -> None:
    meta = _run(files, tmp_path, "--point", "40,30", "--point", "45,35")
    assert meta["size"] == [60, 80] and len(meta["masks"]) == 1
    assert meta["prompt"]["points"] == [[40.0, 30.0], [45.0, 35.0]]


def test_boxes(files, tmp_path: Path) -> None:
    meta = _run(files, tmp_path, "--box", "20,10,60,50", "--box", "0,0,30,30")
    assert len(meta["masks"]) == 2 and all(len(m["box"]) == 4 for m in meta["masks"])


def test_auto(files, tmp_path: Path) -> None:
    image, ckpt = files
    out = tmp_path / "auto"
    code = main(["segment", str(image), "--auto", "--points-per-side", "4", "--checkpoint", str(ckpt),
                 "--model-type", "test", "-o", str(out), "--device", "cpu"])
    assert code == 0 and json.loads((out / "masks.json").read_text())["prompt"]["auto"] is True


def test_errors(files, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image, ckpt = files
    assert main(["segment", str(tmp_path / "none.png"), "--auto", "--checkpoint", str(ckpt), "-o", str(tmp_path)]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["segment", str(image), "--auto", "--checkpoint", str(tmp_path / "x.pth"), "-o", str(tmp_path)]) == 1
    assert "checkpoint file not found" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["segment", str(image), "--point", "1,2,3", "--checkpoint", str(ckpt), "-o", str(tmp_path)])
    with pytest.raises(SystemExit):  # prompts are mutually exclusive
        main(["segment", str(image), "--auto", "--box", "0,0,1,1", "--checkpoint", str(ckpt), "-o", str(tmp_path)])
