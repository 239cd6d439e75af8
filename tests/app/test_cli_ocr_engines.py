"""``vision ocr --engine ray`` on a local Ray instance (CPU) and ``--devices``/``--replicas`` (one process per
replica): the files the local engine writes, a damaged file reported while the run goes on, ``--resume``."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from vision.app.cli import main

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _page(path: Path, lines: list[str], size: int) -> None:
    image = Image.new("RGB", (420, 60 + 34 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for k, line in enumerate(lines):
        draw.text((24, 24 + 34 * k), line, fill="black", font=ImageFont.truetype(FONT, size))
    image.save(path)


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    root.mkdir()
    _page(root / "a.png", ["Invoice number 1042", "Total due 38.50"], 22)
    _page(root / "b.png", ["Quarterly report"], 26)
    _page(root / "c.png", ["Phone (919) 555 0100", "Street address", "Approved"], 20)
    (root / "d.png").write_bytes(b"\x89PNG\r\n\x1a\n damaged")
    _page(tmp_path / "p1.png", ["First page of two"], 24)
    _page(tmp_path / "p2.png", ["Second page", "Signed"], 24)
    first, second = Image.open(tmp_path / "p1.png"), Image.open(tmp_path / "p2.png")
    first.save(root / "e.pdf", save_all=True, append_images=[second], resolution=150)  # pages in one output
    return root


def _outputs(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


def test_ray_engine_writes_what_the_local_engine_writes(corpus: Path, tmp_path: Path, capsys) -> None:
    ray = pytest.importorskip("ray")
    assert main(["ocr", str(corpus), "-o", str(tmp_path / "local"), "--no-progress"]) == 1
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        out = tmp_path / "ray"
        assert main(["ocr", str(corpus), "-o", str(out), "--engine", "ray", "--no-progress"]) == 1
        err = capsys.readouterr().err
        assert "d.png" in err and "error:" in err
        assert _outputs(out) == _outputs(tmp_path / "local")
        assert sorted(_outputs(out)) == ["a.png.txt", "b.png.txt", "c.png.txt", "e.pdf.txt"]
        assert "First page" in _outputs(out)["e.pdf.txt"] and "Signed" in _outputs(out)["e.pdf.txt"]
        (out / "b.png.txt").unlink()
        before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
        assert main(["ocr", str(corpus), "-o", str(out), "--engine", "ray", "--resume", "--no-progress"]) == 1
        assert "3 input(s) already have their output" in capsys.readouterr().err
        assert {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.name in before} == before
        assert _outputs(out) == _outputs(tmp_path / "local")
        by_uri = tmp_path / "uri"  # each Ray read task fetches its file through pyarrow's filesystem
        command = ["ocr", f"{corpus.as_uri()}/", "-o", str(by_uri), "--engine", "ray", "--no-progress"]
        assert main(command) == 1
        assert _outputs(by_uri) == _outputs(tmp_path / "local")
    finally:
        ray.shutdown()


def test_uris_and_lists_name_inputs(corpus: Path, tmp_path: Path, capsys) -> None:
    """``file://`` URIs (object stores' stand-in) and ``--files-from``, through the local engine."""
    assert main(["ocr", str(corpus), "-o", str(tmp_path / "local"), "--no-progress"]) == 1
    listing = tmp_path / "list.txt"
    lines = ["# scans", (corpus / "a.png").as_uri(), "", str(corpus / "b.png"), f"{corpus.as_uri()}/gone/"]
    listing.write_text("\n".join(lines) + "\n")
    out = tmp_path / "listed"
    assert main(["ocr", "--files-from", str(listing), "-o", f"{out}/", "--no-progress"]) == 1  # gone/ fails
    assert f"{corpus.as_uri()}/gone/: no such file or folder" in capsys.readouterr().err
    local = _outputs(tmp_path / "local")
    assert _outputs(out) == {name: local[name] for name in ("a.png.txt", "b.png.txt")}
    assert main(["ocr", "--no-progress"]) == 2 and "no inputs" in capsys.readouterr().err


def test_device_replicas_write_what_one_process_writes(corpus: Path, tmp_path: Path, capsys) -> None:
    """``--devices cpu --replicas 2``: two processes, each with its own predictor, taking files from one queue."""
    assert main(["ocr", str(corpus), "-o", str(tmp_path / "one"), "--no-progress"]) == 1
    capsys.readouterr()
    out = tmp_path / "two"
    assert main(["ocr", str(corpus), "-o", str(out), "--devices", "cpu", "--replicas", "2", "--no-progress"]) == 1
    assert "d.png" in capsys.readouterr().err
    assert _outputs(out) == _outputs(tmp_path / "one")


def test_jobs_on_the_cpu_mean_predictor_lanes() -> None:
    import argparse

    from vision.app.cli._ocr_bulk import cpu_lanes
    from vision.app.cli.ocr import Job

    def args(**kw):
        return argparse.Namespace(**{"jobs": None, "engine": "local", "devices": None, "device": "cpu", **kw})

    files = [Job(Path("a.png"), Path("o/a.png.txt")), Job(Path("b.png"), None)]
    assert cpu_lanes(args(jobs=2), files)
    assert not cpu_lanes(args(jobs=1), files) and not cpu_lanes(args(), files)
    assert not cpu_lanes(args(jobs=2, device="cuda"), files)
    assert not cpu_lanes(args(jobs=2, engine="ray"), files)


def test_automatic_replicas(monkeypatch) -> None:
    """No ``--replicas``: one process except for ``-o`` on one CUDA device, where cores, GPU memory and the
    file count each cap the number (3/4 of 16 cores = 12, 40 GiB free / 6 GiB = 6, 1000 files / 32 = 31)."""
    import argparse
    import os

    import torch

    from vision.app.cli._ocr_engines import auto_replicas

    def args(**kw) -> argparse.Namespace:
        base = {"replicas": None, "device": "cuda", "devices": None, "engine": "local", "output": "out"}
        return argparse.Namespace(**{**base, **kw})

    from vision.pipelines.ocr import gpu_memory

    monkeypatch.setattr(gpu_memory, "free_bytes", lambda device: None)  # torch answers (patched below)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=None: (40 * 1024**3, 80 * 1024**3))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert auto_replicas(args(), 1000) == 6
    assert auto_replicas(args(), 100) == 3  # 100 files / 32
    assert auto_replicas(args(), 10) == 1
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=None: (79 * 1024**3, 80 * 1024**3))
    assert auto_replicas(args(), 1000) == 12  # 3/4 of the cores
    assert auto_replicas(args(replicas=3), 1000) == 3  # given: kept
    assert auto_replicas(args(output=None), 1000) == 1  # stdout: one process
    assert auto_replicas(args(device="cpu"), 1000) == 1
    assert auto_replicas(args(devices="cuda:0,cuda:1"), 1000) == 1  # --devices: one replica per device
    assert auto_replicas(args(engine="ray"), 1000) == 1


def test_automatic_replicas_from_nvidia_smi(monkeypatch) -> None:
    """Where ``nvidia-smi`` tells the free memory, the count comes from it and this process never asks
    torch (no CUDA context before the replicas start)."""
    import argparse
    import os

    import torch

    from vision.app.cli import _ocr_engines
    from vision.pipelines.ocr import gpu_memory

    def refuse(*a, **k):
        raise AssertionError("torch was asked")

    monkeypatch.setattr(gpu_memory, "free_bytes", lambda device: 40 * 1024**3)
    monkeypatch.setattr(torch.cuda, "mem_get_info", refuse)
    monkeypatch.setattr(torch.cuda, "is_available", refuse)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    args = argparse.Namespace(replicas=None, device=None, devices=None, engine="local", output="out")
    assert _ocr_engines.auto_replicas(args, 1000) == 6
    assert _ocr_engines._default_device() == "cuda"
    monkeypatch.setattr(gpu_memory, "free_bytes", lambda device: 0)  # no GPU visible
    assert _ocr_engines.auto_replicas(args, 1000) == 1
    assert _ocr_engines._default_device() == "cpu"


def test_files_in_flight_balance_short_runs() -> None:
    """Each replica holds about a quarter of its share of the files, so the last files are not left to a few
    replicas; never fewer than 8 (or two per worker process)."""
    from vision.app.cli._ocr_engines import files_in_flight

    assert files_in_flight(1000, 12, 0) == 21
    assert files_in_flight(100_000, 12, 0) == 2084  # the bulk engine caps it at a model batch
    assert files_in_flight(10, 12, 0) == 8
    assert files_in_flight(10, 2, 6) == 12


def test_replicas_that_cannot_start_report_why_for_every_file(corpus: Path, tmp_path: Path, capsys) -> None:
    """Replicas take files from a shared queue; when none can build its predictor, every file is reported
    failed with the reason, and the command ends."""
    code = main(["ocr", str(corpus), "-o", str(tmp_path / "out"), "--devices", "cpu", "--replicas", "2",
                 "--det-weights", str(tmp_path / "missing.safetensors"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("cannot build the predictor") >= 4  # the 4 files (and each replica's warning)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_ray_resources_give_cpu_nodes_one_actor_on_every_core() -> None:
    """CPU-only clusters: one OCR actor per node on all its cores, reading its documents itself (no read
    tasks: ``None``), as the local engine does; GPU clusters: one actor per GPU and read tasks of one CPU;
    ``workers`` given on CPUs: single-CPU actors."""
    from vision.pipelines.ocr.ray_engine import plan_resources

    assert plan_resources({"CPU": 2.0}, [2.0], None) == ({"num_cpus": 2.0}, 1, None, 2)
    assert plan_resources({"CPU": 32.0}, [16.0, 16.0], None) == ({"num_cpus": 16.0}, 2, None, 16)
    assert plan_resources({"CPU": 1.0}, [1.0], None) == ({"num_cpus": 1.0}, 1, None, 1)
    assert plan_resources({"CPU": 64.0, "GPU": 4.0}, [64.0], None) == ({"num_gpus": 1.0}, 4, 1.0, None)
    assert plan_resources({"CPU": 64.0, "GPU": 4.0}, [64.0], 2) == ({"num_gpus": 1.0}, 2, 1.0, None)
    assert plan_resources({"CPU": 8.0}, [8.0], 3) == ({"num_cpus": 1.0}, 3, None, 1)

def test_replicas_with_a_model_server_write_the_text_one_process_writes(corpus: Path, tmp_path: Path,
                                                                        capsys) -> None:
    """``--model-server``: the two processes' models run in one server process (here on the CPU). The server
    fits pages and resizes crops as on a GPU (``resize="device"``), so the geometry may differ in the last
    digits from the CPU defaults; the text does not."""
    assert main(["ocr", str(corpus), "-o", str(tmp_path / "one"), "-f", "txt", "--no-progress"]) == 1
    capsys.readouterr()
    out = tmp_path / "served"
    assert main(["ocr", str(corpus), "-o", str(out), "-f", "txt", "--devices", "cpu", "--replicas", "2",
                 "--model-server", "--no-progress"]) == 1
    assert "d.png" in capsys.readouterr().err  # the damaged file is reported, the run goes on
    assert _outputs(out) == _outputs(tmp_path / "one") and len(_outputs(out)) == 4
    assert main(["ocr", str(corpus / "b.png"), "-o", str(tmp_path / "alone"), "--model-server",
                 "--no-progress"]) == 0
    assert "--model-server serves several processes" in capsys.readouterr().err


def test_processes_sharing_a_device_build_eager_models() -> None:
    import argparse

    from vision.app.cli._ocr_engines import worker_args
    from vision.pipelines.ocr.options import options_from_args

    args = argparse.Namespace(device="cuda", precision=None, compile=None, det_arch=None, reco_arch=None,
                              det_weights="default", reco_weights="default")
    shared = worker_args(args, ["cuda:0", "cuda:0"])
    assert shared.cuda_graphs is False and shared.threads >= 1
    assert options_from_args(shared).cuda_graphs is False
    assert getattr(worker_args(args, ["cuda:0", "cuda:1"]), "cuda_graphs", None) is None
    args.model_server = True  # one process holds the models: graphs are its to choose
    assert getattr(worker_args(args, ["cuda:0", "cuda:0"]), "cuda_graphs", None) is None
