"""Command-line habits: ``vision --version`` without importing torch, and a clear message naming the extra
to install when a command's optional dependency is missing (``serve``, ``ui``, ``video --engine ray``)."""

import subprocess
import sys
from pathlib import Path

import pytest
from _app_media import video

from vision.app.cli import main
from vision.app.cli._extras import missing_extra_message

ROOT = Path(__file__).parents[2]


def test_version_answers_without_importing_torch():
    code = (
        "import sys; from vision.app.cli import main; main(['--version']); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().startswith("vision ")


def test_the_ray_driver_never_imports_torch(tmp_path):
    """``vision ocr --engine ray`` (with ``--lang``): only the actors build models; the driver stays light."""
    from PIL import Image

    Image.new("RGB", (64, 32), "white").save(tmp_path / "a.png")
    code = (
        "import sys; import vision.pipelines.ocr.ray_engine as engine; "
        "engine.run_ray = lambda jobs, **kw: iter([(job, None) for job in jobs]); "
        "from vision.app.cli import main; "
        f"code = main(['ocr', {str(tmp_path)!r}, '-o', {str(tmp_path / 'out')!r}, '--engine', 'ray', '-l', 'de', "
        "'--no-progress']); "
        "assert code == 0, code; assert 'torch' not in sys.modules, 'torch imported'"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(
    ("argv", "blocked", "extra"),
    [(["serve"], "uvicorn", "serve"), (["ui"], "gradio", "ui")],
)
def test_missing_optional_dependencies_name_their_extra(argv, blocked, extra, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, blocked, None)  # import now raises ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "vision.app.ui", raising=False)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"pip install 'vision-ocr[{extra}]'" in err and blocked in err


def test_video_with_the_ray_engine_names_the_distributed_extra(tmp_path, monkeypatch, capsys):
    (tmp_path / "clip.mp4").write_bytes(video(seconds=1.0))
    monkeypatch.setitem(sys.modules, "ray", None)
    argv = ["video", str(tmp_path / "clip.mp4"), "-o", str(tmp_path / "out"), "--engine", "ray"]
    argv += ["--no-progress"]
    assert main(argv) == 1
    assert "pip install 'vision-ocr[distributed]'" in capsys.readouterr().err


def test_other_missing_modules_are_bugs_not_extras():
    assert missing_extra_message(ModuleNotFoundError("x", name="vision.nothing"), "ocr") is None


def test_serve_help_shows_the_limits_the_service_enforces(capsys):
    from vision.app.api.settings import LimitSettings

    enforced = LimitSettings()
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default {enforced.max_bytes})" in text and f"(default {enforced.max_pages})" in text
