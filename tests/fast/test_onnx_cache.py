"""The ONNX export cache: keyed by structure and weights, reused, re-exported when unreadable, and usable
when the cache folder cannot be written. A small conv net keeps each export well under a second."""

import os

import torch
from torch import nn

from vision.fast.onnx import cached_runner, model_key


def _net(width: int = 8) -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.Hardswish(),
                         nn.Conv2d(width, 1, 1)).eval()


AXES = {"images": {0: "batch", 2: "height", 3: "width"}, "out": {0: "batch", 2: "height", 3: "width"}}


def _runner(model: nn.Module, folder) -> object:
    return cached_runner(model, torch.rand(1, 3, 16, 16), name="net", dynamic_axes=AXES, output_name="out",
                         cache_dir=folder, threads=1)


def test_key_follows_weights_and_structure() -> None:
    a = _net()
    b = _net()
    b.load_state_dict(a.state_dict())
    assert model_key(a) == model_key(b)
    with torch.no_grad():
        b[0].weight[0, 0, 0, 0] += 1e-3
    assert model_key(a) != model_key(b)
    c = _net()
    c.load_state_dict(a.state_dict())
    c[2] = nn.ReLU()  # same weights, another activation: another graph
    assert model_key(a) != model_key(c)
    assert model_key(a, (3, 32, 32)) != model_key(a, (3, 16, 16))


def test_runner_matches_eager_on_new_shapes_and_is_reused(tmp_path) -> None:
    model = _net()
    runner = _runner(model, tmp_path)
    x = torch.randn(2, 3, 40, 24)  # another batch size, height and width than the export example
    with torch.no_grad():
        torch.testing.assert_close(runner(x), model(x), rtol=1e-4, atol=1e-5)
    (path,) = tmp_path.glob("net-*.onnx")
    os.utime(path, (1, 1))
    _runner(model, tmp_path)
    assert list(tmp_path.glob("net-*.onnx")) == [path]  # reused, not exported again
    assert path.stat().st_mtime > 1  # marked as recently used
    other = _net()
    _runner(other, tmp_path)
    assert len(list(tmp_path.glob("net-*.onnx"))) == 2  # other weights, another file


def test_unreadable_cached_file_is_exported_again(tmp_path) -> None:
    model = _net()
    _runner(model, tmp_path)
    (path,) = tmp_path.glob("net-*.onnx")
    path.write_bytes(b"not an onnx graph")
    runner = _runner(model, tmp_path)
    x = torch.randn(1, 3, 16, 16)
    with torch.no_grad():
        torch.testing.assert_close(runner(x), model(x), rtol=1e-4, atol=1e-5)
    assert path.stat().st_size > 1000


def test_read_only_cache_falls_back_to_a_temporary_export(tmp_path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    model = _net()
    runner = _runner(model, blocked / "onnx")  # mkdir fails: not a directory
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(runner(x), model(x), rtol=1e-4, atol=1e-5)
    assert blocked.read_text().startswith("a file")


def test_old_exports_are_pruned(tmp_path) -> None:
    from vision.fast.onnx import KEEP_PER_NAME

    for i in range(KEEP_PER_NAME + 2):
        _runner(_net(), tmp_path)  # new random weights: a new file, the most recent one
        newest = max(tmp_path.glob("net-*.onnx"), key=lambda p: p.stat().st_mtime)
        os.utime(newest, (10 + i, 10 + i))  # distinct use times, whatever the clock's grain
    left = sorted(p.stat().st_mtime for p in tmp_path.glob("net-*.onnx"))
    assert left == [10.0 + i for i in range(2, KEEP_PER_NAME + 2)]  # the two least recently used went


def test_a_second_build_does_not_write_the_cached_file(tmp_path) -> None:
    model = _net()
    _runner(model, tmp_path)
    (path,) = tmp_path.glob("net-*.onnx")
    before = path.stat()
    _runner(model, tmp_path)
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


_BUILD = """
import sys, torch
from torch import nn
from vision.fast.onnx import cached_runner
torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Hardswish(), nn.Conv2d(8, 1, 1)).eval()
axes = {"images": {0: "batch", 2: "height", 3: "width"}, "out": {0: "batch", 2: "height", 3: "width"}}
runner = cached_runner(net, torch.rand(1, 3, 16, 16), name="net", dynamic_axes=axes, output_name="out",
                       cache_dir=sys.argv[1], threads=1)
x = torch.rand(1, 3, 12, 20)
with torch.no_grad():
    torch.testing.assert_close(runner(x), net(x), rtol=1e-4, atol=1e-5)
print("ok")
"""


def test_processes_building_at_once_share_one_export(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, "-c", _BUILD, str(tmp_path)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    assert all(out.strip() == "ok" for out, _ in outs)
    assert len(list(tmp_path.glob("net-*.onnx"))) == 1
    assert list(tmp_path.glob("*.tmp")) == [] and list(tmp_path.glob(".*.tmp")) == []
