"""DDP recognition training on the CPU: two gloo processes agree on the clock and on stopping, rank 0 writes
a checkpoint that a later run (of any world size) resumes, and ranks draw different samples."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp

from vision.training.recognition_config import RecognitionTrainConfig

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, cfg: RecognitionTrainConfig, out: str, kwargs: dict) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    torch.set_num_threads(1)
    from vision.training.recognition_train import train

    log = train(cfg, Path(out), device="cpu", sync_every=2, **kwargs)
    Path(out, f"rank{rank}.json").write_text(json.dumps(log))


@pytest.fixture(scope="module")
def words_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("words")
    (d / "english").write_text("apple\nbanana\ncherry\nstation\n")
    return d


def _cfg(words_dir: Path) -> RecognitionTrainConfig:
    return RecognitionTrainConfig(fonts=(str(DEJAVU),), words=str(words_dir), batch_size=4, width=64, workers=0,
                                  val_size=4, epoch_steps=100, compile=False, warmup_steps=1,
                                  model={"hidden": 16, "proj": 32}, synth={"font_px": (16, 18)})


def test_ddp_two_processes_train_stop_together_and_resume(tmp_path: Path, words_dir: Path) -> None:
    cfg = _cfg(words_dir)
    out = tmp_path / "run"
    mp.spawn(_worker, args=(2, _port(), cfg, str(out), {"max_steps": 4}), nprocs=2, join=True)
    log0 = json.loads((out / "rank0.json").read_text())
    assert json.loads((out / "rank1.json").read_text()) == {}  # only rank 0 logs and saves
    assert log0["step"] == 4 and log0["world"] == 2 and log0["samples"] == 4 * 4 * 2
    assert (out / "checkpoint" / "trainer.json").is_file() and (out / "weights.safetensors").is_file()
    # the clock decides: a time budget stops both ranks at the same step (they would hang otherwise)
    mp.spawn(_worker, args=(2, _port(), cfg, str(out), {"resume": out / "checkpoint", "max_minutes": 0.05,
                                                         "reserve_seconds": 0.0}), nprocs=2, join=True)
    log = json.loads((out / "log.json").read_text())
    assert log[-1]["step"] > 4 and log[-1]["samples"] == 32 + (log[-1]["step"] - 4) * 8
    # a single process resumes the DDP checkpoint
    from vision.training.recognition_train import train

    last = train(cfg, out, resume=out / "checkpoint", max_steps=log[-1]["step"] + 1, device="cpu")
    assert last["world"] == 1 and last["step"] == log[-1]["step"] + 1


def test_ranks_draw_different_samples(words_dir: Path) -> None:
    from vision.training.synth.word_batches import SyntheticWordBatches

    renderer = lambda rng: (rng.integers(0, 255, (32, 40, 3), dtype=np.uint8), "a")
    first = [next(iter(SyntheticWordBatches(renderer, 4, 64, seed=3, rank=r))).images for r in (0, 1, 0)]
    assert torch.equal(first[0], first[2]) and not torch.equal(first[0], first[1])
