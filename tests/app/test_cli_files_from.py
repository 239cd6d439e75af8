"""``--files-from``: a list that is not UTF-8 text, or longer than ``LIST_BYTES``, is refused with a message
naming it (exit code 2), never read whole into memory."""

from __future__ import annotations

from pathlib import Path

import vision.app.cli._ocr_inputs as inputs
from vision.app.cli import main


def test_a_binary_or_oversized_list_is_refused(tmp_path: Path, capsys, monkeypatch) -> None:
    binary = tmp_path / "scan.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00 not text")
    assert main(["ocr", "--files-from", str(binary), "--no-progress"]) == 2
    assert f"--files-from {binary}: 'utf-8' codec can't decode" in capsys.readouterr().err
    listing = tmp_path / "list.txt"
    listing.write_text("a.png\nb.png\n")
    monkeypatch.setattr(inputs, "LIST_BYTES", 8)
    assert main(["ocr", "--files-from", str(listing), "--no-progress"]) == 2
    assert "longer than 8 bytes" in capsys.readouterr().err
    assert main(["ocr", "--files-from", str(tmp_path / "gone.txt"), "--no-progress"]) == 2
    assert "gone.txt" in capsys.readouterr().err
