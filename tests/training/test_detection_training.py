"""DB targets and loss, the detection data pipeline and a resumable two-step training run on CPU."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from vision.training.detection import load_config, train
from vision.training.detection_data import DataConfig, make_page, random_crops
from vision.training.losses.db import THRESH_MAX, THRESH_MIN, db_loss, db_targets

DEJAVU = "/usr/share/fonts/truetype/dejavu"


def test_db_targets_geometry():
    t = db_targets(40, 100, np.array([[10, 10, 90, 30]]), ignore=np.array([[0, 35, 10, 40]]), shrink=0.25)
    ys, xs = np.nonzero(t["gt"])
    # short side 20 -> shrunk by 5 px: kernel covers pixel centres in [15, 85] x [15, 25]
    assert (xs.min(), xs.max(), ys.min(), ys.max()) == (15, 84, 15, 24)
    assert t["mask"][36, 5] == 0 and t["mask"][20, 50] == 1
    thresh = t["thresh"] / 255
    # row 10 (centre 10.5) is 0.5 px from the top edge: 1 - 0.5 / 5 of the way from THRESH_MIN to THRESH_MAX
    assert thresh[10, 50] == pytest.approx(THRESH_MIN + 0.9 * (THRESH_MAX - THRESH_MIN), abs=0.01)
    assert thresh[20, 50] == pytest.approx(THRESH_MIN, abs=0.01)  # deep inside: far from edges
    assert t["thresh_mask"][7, 50] == 1 and t["thresh_mask"][0, 50] == 0


def test_tiny_words_are_masked_not_labelled():
    t = db_targets(20, 20, np.array([[2, 2, 12, 4.5]]), min_side=4)
    assert t["gt"].sum() == 0 and t["mask"][3, 5] == 0


def test_db_loss_prefers_the_right_answer():
    t = db_targets(32, 64, np.array([[8, 8, 56, 24]]))
    to = {k: torch.from_numpy(v).float()[None, None] for k, v in t.items()}
    thresh_gt = to["thresh"] / 255
    good_logits = (to["gt"] * 2 - 1) * 8
    good, parts = db_loss(good_logits, thresh_gt, to["gt"], to["mask"], thresh_gt, to["thresh_mask"])
    bad, _ = db_loss(-good_logits, 1 - thresh_gt, to["gt"], to["mask"], thresh_gt, to["thresh_mask"])
    assert torch.isfinite(good) and good < 0.05 < bad
    assert set(parts) == {"prob", "binary", "thresh"}


def test_make_page_and_crops_keep_targets_aligned():
    cfg = DataConfig(long_side=256, crop=128, crops_per_page=3)
    rng = np.random.default_rng(0)
    page = np.full((400, 300, 3), 255, np.uint8)
    boxes = np.array([[50, 50, 250, 80], [50, 200, 150, 230]], np.float32)
    for x0, y0, x1, y1 in boxes.astype(int):
        page[y0 + 5 : y1 - 5, x0 + 2 : x1 - 2] = 0
    image, t = make_page(page, boxes, rng, cfg, profile="clean", scale_jitter=False, geometry=False)
    assert image.shape[:2] == t["gt"].shape == (256, 192)
    dark = image.mean(axis=2) < 128
    assert dark[t["gt"] > 0].mean() > 0.9  # kernels lie on the ink
    crops = random_crops(image, t, rng, 128, 3)
    assert len(crops) == 3
    for c in crops:
        assert c["image"].shape == (128, 128, 3) and c["gt"].shape == (128, 128)
        assert all(c[k].dtype == np.uint8 for k in c)


@pytest.fixture(scope="module")
def pdf_set(tmp_path_factory, text_pdf) -> Path:
    from vision.training.synth.pdf_pages import build_page_set

    root = tmp_path_factory.mktemp("det")
    text_pdf(root / "doc.pdf", pages=3, lines=20, size=12, top=90, step=20,
                   text="Page {page} line {line}: several words on a line")
    assert build_page_set([root / "doc.pdf"], root / "pages", max_pages=3, per_file=3, min_words=20) == 3
    return root / "pages"


def test_training_runs_saves_and_resumes(pdf_set, tmp_path):
    data = {
        "pdf_dir": str(pdf_set),
        "fonts_dir": DEJAVU,
        "dict_dir": "",
        "val_pages": 1,
        "crop": 128,
        "crops_per_page": 2,
        "long_side": 384,
    }
    cfg_path = tmp_path / "cfg.json"
    cfg_path.write_text(
        json.dumps(
            {
                "batch_size": 2,
                "workers": 0,
                "bf16": False,
                "device": "cpu",
                "log_every": 1,
                "reserve_s": 0,
                "val_budget_s": 30,
                "data": data,
            }
        )
    )
    out = tmp_path / "out"
    summary = train(load_config(str(cfg_path), out_dir=str(out), max_steps=2))
    assert summary["step"] == 2 and (out / "ckpt" / "trainer.json").is_file()
    assert (out / "det_db_mobilenet_v3_large.safetensors").is_file()
    assert summary["validation"]["pages"] == 1 and summary["validation"]["sweep"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"]["data"]["crop"] == 128
    again = train(
        load_config(str(cfg_path), out_dir=str(tmp_path / "out2"), max_steps=1, resume=str(out / "ckpt"))
    )
    assert again["step"] == 3 and again["optimizer"] == "restored"
    for f in (out / "ckpt").glob(
        "optim-*"
    ):  # only the weights travelled: AdamW restarts, the schedule goes on
        f.unlink()
    third = train(
        load_config(str(cfg_path), out_dir=str(tmp_path / "out3"), max_steps=1, resume=str(out / "ckpt"))
    )
    assert (
        third["step"] == 3 and third["optimizer"] == "restarted" and third["trained_s"] > summary["trained_s"]
    )
    light = train(  # the fp16 folder brought back from a GPU call continues the schedule too
        load_config(str(cfg_path), out_dir=str(tmp_path / "out5"), max_steps=1, resume=str(out / "resume"))
    )
    assert light["step"] == 3 and light["optimizer"] == "restarted"
    assert sum(f.stat().st_size for f in (out / "resume").iterdir()) < 0.6 * sum(
        f.stat().st_size for f in (out / "ckpt").glob("model-*"))
    weights = out / "det_db_mobilenet_v3_large.safetensors"
    tuned = train(load_config(str(cfg_path), out_dir=str(tmp_path / "out4"), max_steps=1, init=str(weights)))
    assert tuned["step"] == 1 and tuned["optimizer"] == "new"
    start = load_file(str(weights))
    after = load_file(str(tmp_path / "out4" / "det_db_mobilenet_v3_large.safetensors"))
    assert start.keys() == after.keys()
    # one step from the given weights, not from a random init: the weights moved by a small step
    params = [k for k in start if "running_" not in k and start[k].is_floating_point()]
    drift = max((after[k] - start[k]).abs().max().item() for k in params)
    assert 0 < drift < 0.05


def _ddp_worker(rank: int, world: int, port: int, cfg_path: str, out: str) -> None:
    import os

    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    torch.set_num_threads(1)
    summary = train(load_config(cfg_path, out_dir=out, max_steps=3, sync_every=2))
    Path(out, f"rank{rank}.json").write_text(json.dumps({k: v for k, v in summary.items() if k != "config"}))


def test_ddp_two_processes_train_together_and_resume_alone(pdf_set, tmp_path):
    """Two gloo ranks take the same steps (they agree every 2 steps, so max_steps 3 stops both at step 4),
    only rank 0 writes, and one process resumes their checkpoint."""
    import socket

    import torch.multiprocessing as mp

    data = {"pdf_dir": str(pdf_set), "fonts_dir": DEJAVU, "dict_dir": "", "val_pages": 1, "crop": 128,
            "crops_per_page": 2, "long_side": 384}
    cfg_path = tmp_path / "cfg.json"
    cfg_path.write_text(json.dumps({"batch_size": 2, "workers": 0, "bf16": False, "device": "cpu",
                                    "log_every": 1, "reserve_s": 0, "val_budget_s": 30, "data": data}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "ddp"
    mp.spawn(_ddp_worker, args=(2, port, str(cfg_path), str(out)), nprocs=2, join=True)
    rank0 = json.loads((out / "rank0.json").read_text())
    assert json.loads((out / "rank1.json").read_text()) == {}
    assert rank0["world"] == 2 and rank0["step"] == 4 and rank0["samples"] == 4 * 2 * 2
    assert (out / "ckpt" / "trainer.json").is_file()
    assert (out / "det_db_mobilenet_v3_large.safetensors").is_file()
    alone = train(
        load_config(str(cfg_path), out_dir=str(tmp_path / "alone"), max_steps=1, resume=str(out / "ckpt"))
    )
    assert alone["world"] == 1 and alone["step"] == 5 and alone["optimizer"] == "restored"


def test_detection_ranks_draw_different_pages():
    from vision.training.detection_data import DetectionStream

    cfg = DataConfig(pdf_dir="", fonts_dir=DEJAVU, dict_dir="", crop=64, crops_per_page=1, long_side=192)
    first = [next(iter(DetectionStream(cfg, seed=3, rank=r)))["image"] for r in (0, 1, 0)]
    assert np.array_equal(first[0], first[2]) and not np.array_equal(first[0], first[1])
