"""``vision video``: folders, several containers and codecs, broken files, resume, atomic outputs, progress
bars, and the Ray engine on a local Ray instance. The OCR is the deterministic template recognizer of
tests/pipelines/_video_synth.py (the real predictor is covered by tests/pipelines/test_video_real_ocr.py)."""

import functools
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
import _video_synth  # noqa: E402
from _video_synth import CAPTIONS, TemplateOCR, check_subtitles, check_timeline, encode_cfr, encode_vfr  # noqa: E402

import vision.app.cli.video as cli_video  # noqa: E402
from vision.app.cli import main  # noqa: E402
from vision.structures import Document  # noqa: E402

VOCAB = [c.text for c in CAPTIONS]
OUTS = ("json", "srt", "vtt", "txt")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A folder with an H.264 MP4, and in a subfolder a variable-frame-rate MKV and an MPEG-4 AVI; a broken
    MP4 lives in a folder of its own."""
    root = tmp_path_factory.mktemp("corpus")
    (root / "sub").mkdir()
    clips = {
        "a.mp4": encode_cfr(root / "a.mp4"),
        "sub/b.mkv": encode_vfr(root / "sub" / "b.mkv"),
        "sub/c.avi": encode_cfr(
            root / "sub" / "c.avi", codec="mpeg4", options={"extra_options": {"qscale": 2}}
        ),
    }
    (root / "notes.txt").write_text("not a video extension: folders skip it\n")
    bad = tmp_path_factory.mktemp("bad") / "broken.mp4"
    data = (root / "a.mp4").read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    return {"root": root, "clips": clips, "broken": bad}


@pytest.fixture
def ocr(monkeypatch: pytest.MonkeyPatch) -> TemplateOCR:
    """The predictor the CLI builds (one shared instance, so tests can count its calls)."""
    shared = TemplateOCR(VOCAB)
    monkeypatch.setattr(cli_video, "predictor_factory", lambda args, processes=1: lambda: shared)
    return shared


def outputs_of(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


def test_folder_run_writes_reports_broken_and_resumes(
    corpus: dict, tmp_path: Path, ocr: TemplateOCR, capsys
) -> None:
    out = tmp_path / "out"
    options = ["-o", str(out), "--recursive", "--no-progress"]
    assert main(["video", str(corpus["root"]), str(corpus["broken"]), *options]) == 1
    err = capsys.readouterr().err
    assert f"error: {corpus['broken']}:" in err and "3 processed, 0 already done, 1 failed" in err
    expected = {f"{name}.{fmt}" for name in corpus["clips"] for fmt in OUTS}
    assert set(outputs_of(out)) == expected  # nothing for the broken file, notes.txt or half-written files
    for name, clip in corpus["clips"].items():
        doc = Document.from_json((out / f"{name}.json").read_text())
        check_timeline(doc, clip, 1.0)
        check_subtitles(doc)
        assert (out / f"{name}.srt").read_text() == doc.to_srt()
        assert (out / f"{name}.txt").read_text() == "".join(f"{e.text}\n" for e in doc.timeline)

    first = outputs_of(out)
    calls = len(ocr.calls)
    (out / "sub" / "b.mkv.srt").unlink()
    (out / "sub" / ".b.mkv.srt.4242.k1ll3d00.tmp").write_text("half a file from a killed run")
    assert main(["video", str(corpus["root"]), *options]) == 0
    assert len(ocr.calls) == calls  # nothing decoded again: done videos skipped, the SRT rebuilt from JSON
    assert outputs_of(out) == first
    assert "0 processed, 3 already done, 0 failed" in capsys.readouterr().err


def test_without_recursive_only_the_folder_itself(corpus: dict, tmp_path: Path, ocr: TemplateOCR) -> None:
    out = tmp_path / "out"
    assert main(["video", str(corpus["root"]), "-o", str(out), "--no-progress", "--format", "srt"]) == 0
    assert set(outputs_of(out)) == {"a.mp4.srt"}


def test_an_interrupted_run_leaves_only_whole_files(
    corpus: dict, tmp_path: Path, ocr: TemplateOCR, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tmp_path / "reference"
    assert main(["video", str(corpus["root"]), "-o", str(reference), "-r", "--no-progress"]) == 0
    real_fsync, count = os.fsync, [0]

    def fsync_then_die(fd: int) -> None:
        count[0] += 1
        if count[0] == 6:  # in the middle of the second video's files
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_then_die)  # every durable write goes through it
    out = tmp_path / "out"
    assert main(["video", str(corpus["root"]), "-o", str(out), "-r", "--no-progress"]) == 130
    partial = outputs_of(out)
    assert 0 < len(partial) < len(outputs_of(reference))
    assert all(text == outputs_of(reference)[name] for name, text in partial.items())  # whole files only
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert main(["video", str(corpus["root"]), "-o", str(out), "-r", "--no-progress"]) == 0
    assert outputs_of(out) == outputs_of(reference)


def test_progress_bars_for_the_folder_and_the_current_video(
    corpus: dict, tmp_path: Path, ocr: TemplateOCR, capsys
) -> None:
    assert main(["video", str(corpus["root"] / "a.mp4"), "-o", str(tmp_path), "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert "videos: 100%" in err and "1/1" in err  # the folder bar
    assert "a.mp4:" in err and "9/9" in err  # the current video's frame bar (9 samples at 1 fps)


def test_argument_and_input_errors(corpus: dict, tmp_path: Path, ocr: TemplateOCR, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["video", str(corpus["root"]), "-o", str(tmp_path), "--format", "srt,docx"])
    assert exc.value.code == 2
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / "a.mp4").write_bytes((corpus["root"] / "a.mp4").read_bytes())
    assert main(["video", str(corpus["root"]), str(twin), "-o", str(tmp_path / "o"), "--no-progress"]) == 2
    assert "would write the same outputs" in capsys.readouterr().err
    assert main(["video", str(tmp_path / "nowhere.mp4"), "-o", str(tmp_path / "o"), "--no-progress"]) == 1
    assert "nowhere.mp4: no such file or folder" in capsys.readouterr().err


def test_ray_engine_writes_what_the_local_engine_writes(
    corpus: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import ray
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(_video_synth)  # Ray workers cannot import the tests' helper module
    monkeypatch.setattr(cli_video, "predictor_factory",
                        lambda args, processes=1: functools.partial(TemplateOCR, VOCAB))
    argv = [str(corpus["root"]), str(corpus["broken"]), "-r", "--no-progress", "--batch-size", "4"]
    assert main(["video", *argv, "-o", str(tmp_path / "local")]) == 1
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert main(["video", *argv, "-o", str(tmp_path / "ray"), "--engine", "ray", "--workers", "1"]) == 1
    finally:
        ray.shutdown()
    assert f"error: {corpus['broken']}:" in capsys.readouterr().err
    assert outputs_of(tmp_path / "ray") == outputs_of(tmp_path / "local")


def test_worker_processes_write_what_one_process_writes(
    corpus: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """``--processes 2``: whole videos over two spawned workers, each with its own predictor."""
    monkeypatch.setattr(cli_video, "predictor_factory",
                        lambda args, processes=1: functools.partial(TemplateOCR, VOCAB))
    argv = [str(corpus["root"]), str(corpus["broken"]), "-r", "--no-progress", "--batch-size", "4"]
    assert main(["video", *argv, "-o", str(tmp_path / "one")]) == 1
    assert main(["video", *argv, "-o", str(tmp_path / "two"), "--processes", "2"]) == 1
    err = capsys.readouterr().err
    assert err.count(f"error: {corpus['broken']}:") == 2 and "3 processed, 0 already done, 1 failed" in err
    assert outputs_of(tmp_path / "two") == outputs_of(tmp_path / "one") and len(outputs_of(tmp_path / "one")) == 12


def test_video_processes_sharing_a_device_build_eager_models() -> None:
    import argparse

    args = argparse.Namespace(device="cuda", batch_size=8)
    assert cli_video.predictor_factory(args, processes=4).keywords["cuda_graphs"] is False
    assert "cuda_graphs" not in cli_video.predictor_factory(args).keywords
