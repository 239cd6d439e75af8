"""Synthetic word generator, text sampler, batches, CTC loss and a tiny resumable training run."""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from vision.models.recognition.vocab import CHECKBOX_CHECKED, CHECKBOX_EMPTY, VOCAB, encode
from vision.training.losses import ctc_loss
from vision.training.synth.corpus import Corpus, TextSampler, prepare_word_lists, short_token
from vision.training.synth.fonts import discover_fonts
from vision.training.synth.glyphs import GlyphCache
from vision.training.synth.word_batches import SyntheticWordBatches, collate_words
from vision.training.synth.words import WordRenderer, WordSynthConfig

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@pytest.fixture(scope="module")
def words_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    (src / "english").write_text("apple\nbanana\ncherry\nTobacco\nreport's\n")
    (src / "french").write_bytes("été\nçà\nœuvre\n".encode("latin-1", "replace"))  # not UTF-8: read as Latin-1
    dst = tmp_path_factory.mktemp("words")
    assert prepare_word_lists(src, dst) == 7  # "report's" dropped
    return dst


@pytest.fixture(scope="module")
def renderer(words_dir: Path) -> WordRenderer:
    fonts = discover_fonts([DEJAVU], include_system=False)
    return WordRenderer(fonts, TextSampler(Corpus.from_dir(words_dir)), WordSynthConfig(max_width=192, p_sliver=0.5))


def test_sampler_is_deterministic_and_in_vocabulary(words_dir: Path) -> None:
    sampler = TextSampler(Corpus.from_dir(words_dir))
    a = [sampler(np.random.default_rng(i)) for i in range(300)]
    b = [sampler(np.random.default_rng(i)) for i in range(300)]
    assert a == b
    assert all(t and set(t) <= set(VOCAB) for t in a)
    joined = "".join(a)
    assert any(c.isdigit() for c in joined) and any(c.isupper() for c in joined) and ":" in joined
    assert CHECKBOX_EMPTY in joined or CHECKBOX_CHECKED in joined


def test_renderer_is_deterministic_and_shaped(renderer: WordRenderer) -> None:
    a = [renderer(np.random.default_rng(i)) for i in range(40)]
    b = [renderer(np.random.default_rng(i)) for i in range(40)]
    for (img_a, text_a), (img_b, text_b) in zip(a, b):
        assert text_a == text_b and np.array_equal(img_a, img_b)
        assert img_a.dtype == np.uint8 and img_a.shape[0] == 32 and img_a.shape[2] == 3 and img_a.shape[1] <= 192
    assert len({t for _, t in a}) > 20
    assert np.mean([img.mean() for img, _ in a]) > 100  # paper-coloured, not ink-coloured


def test_checkbox_is_drawn(renderer: WordRenderer) -> None:
    img = renderer.render(CHECKBOX_CHECKED, np.random.default_rng(0))
    assert img is not None and img.min() < 128 and img.shape[1] < 80


def test_dust_stays_off_the_period_position() -> None:
    """Dust specks land in the margins but never where a trailing period or comma would sit (right of the
    word, at baseline height), so they never contradict the label."""
    from vision.training.synth.words import _dust

    box, h = (100.0, 50.0, 300.0, 90.0), 40.0
    inked = 0
    for seed in range(200):
        canvas = np.zeros((200, 420), np.uint8)
        _dust(canvas, box, 40, np.random.default_rng(seed))
        inked += canvas.any()
        assert not canvas[int(50 + 0.55 * h) + 4:int(90 + 0.1 * h) - 4, 300:int(300 + 0.5 * h)].any()
        assert not canvas[56:84, 104:296].any()  # the word itself stays clean
    assert inked == 200


def test_initials_are_a_capital_and_a_period(words_dir: Path) -> None:
    fonts = discover_fonts([DEJAVU], include_system=False)
    sampler = TextSampler(Corpus.from_dir(words_dir))
    render = WordRenderer(fonts, sampler, WordSynthConfig(max_width=192, p_initials=0.5))
    texts = [render(np.random.default_rng(i))[1] for i in range(60)]
    initials = [t for t in texts if len(t) == 2 and t[1] == "." and t[0].isupper()]
    assert 15 <= len(initials) <= 45 and len(set(initials)) > 5


def test_short_tokens_are_one_or_two_characters_in_vocabulary(words_dir: Path) -> None:
    tokens = [short_token(np.random.default_rng(i)) for i in range(2000)]
    assert all(t and set(t) <= set(VOCAB) for t in tokens)
    lengths = Counter(len(t) for t in tokens)
    assert lengths[1] > 600 and lengths[2] > 400 and max(lengths) <= 4
    assert {"mm", "$", "-", "No"} <= set(tokens)
    fonts = discover_fonts([DEJAVU], include_system=False)
    render = WordRenderer(fonts, TextSampler(Corpus.from_dir(words_dir)), WordSynthConfig(max_width=192, p_short=0.5))
    texts = [render(np.random.default_rng(i))[1] for i in range(80)]
    assert 20 <= sum(len(t) <= 2 for t in texts) <= 70


def test_edge_cuts_clip_the_words_own_ink() -> None:
    """A ``cuts`` depth cuts that far inside the word's ink (not its looser glyph boxes); without cuts the
    margins stay outside or at the ink."""
    from vision.training.synth.words import _crop

    canvas = np.zeros((60, 200), np.uint8)
    canvas[20:40, 50:150] = 255  # the word's ink
    box = (48.0, 18.0, 152.0, 42.0)  # glyph boxes 2 px looser than the ink
    for seed in range(20):
        cut = _crop(canvas, box, np.random.default_rng(seed), cuts=(None, 3.0))
        right_ink = np.flatnonzero(cut.any(0))
        assert right_ink[-1] == cut.shape[1] - 1  # ink reaches the right edge
        assert cut[:, right_ink[0]:].any(0).sum() in (96, 97)  # 100 columns less a 3-4 px cut
    kept = [_crop(canvas, box, np.random.default_rng(s)).any(0).sum() for s in range(50)]
    assert min(kept) >= 98  # at most the rare -0.02 h margin trims a column


def test_glyph_cache_matches_text_width() -> None:
    cache = GlyphCache()
    mask = cache.render(str(DEJAVU / "DejaVuSans.ttf"), 24, "Hello")
    x0, y0, x1, y1 = mask.ink_box
    assert mask.mask.max() == 255 and 40 < x1 - x0 < 80 and 0 < y1 - y0 <= 24
    wide = cache.render(str(DEJAVU / "DejaVuSans.ttf"), 24, "Hello", spacing=5)
    assert wide.mask.shape[1] >= mask.mask.shape[1] + 4 * 5


def test_grouped_batches_pad_to_their_bucket(renderer: WordRenderer) -> None:
    stream = iter(SyntheticWordBatches(renderer, batch_size=6, width=192, seed=1, group=3))
    batches = [next(stream) for _ in range(3)]
    for batch in batches:
        assert batch.images.dtype == torch.uint8 and batch.images.shape[:3] == (6, 3, 32)
        assert batch.images.shape[3] % 32 == 0 and batch.lengths.dtype == torch.long
        for row, text in enumerate(batch.texts):
            assert batch.targets[row, :batch.lengths[row]].tolist() == encode(text)
    assert len({b.images.shape[3] for b in batches}) >= 2


def test_ctc_loss_lengths_on_cpu() -> None:
    batch = collate_words([(np.full((32, 40, 3), 255, np.uint8), "ab"), (np.zeros((32, 64, 3), np.uint8), "c")], 64)
    logits = torch.randn(2, 16, len(VOCAB) + 1, requires_grad=True)
    loss = ctc_loss(logits, batch.targets, batch.lengths)
    loss.backward()
    assert torch.isfinite(loss) and logits.grad is not None
    with pytest.raises(ValueError):
        ctc_loss(logits, batch.targets, batch.lengths, torch.full((2,), 16).to("meta"))


def _train(tmp_path: Path, words_dir: Path, *argv: str, **fields: object) -> Path:
    """A tiny CPU training run (DejaVu fonts, a 16-unit LSTM) into ``tmp_path / "out"``; returns that folder."""
    from vision.training.recognition import add_arguments, run

    cfg = {"fonts": [str(DEJAVU)], "words": str(words_dir), "batch_size": 4, "width": 64, "workers": 0,
           "val_size": 4, "epoch_steps": 2, "compile": False, "warmup_steps": 1,
           "model": {"hidden": 16, "proj": 32}, "synth": {"font_px": [16, 18]}, **fields}
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = tmp_path / "out"
    assert run(parser.parse_args(["--config", str(tmp_path / "cfg.json"), "--out", str(out), *argv])) == 0
    return out


def test_training_runs_and_resumes(tmp_path, words_dir: Path) -> None:
    out = _train(tmp_path, words_dir, "--max-steps", "2", group_batches=2)
    log = json.loads((out / "log.json").read_text())
    assert log[-1]["step"] == 2 and (out / "weights.safetensors").is_file()
    _train(tmp_path, words_dir, "--max-steps", "3", "--resume", str(out / "checkpoint"), "--set", "lr=0.001",
           group_batches=2)
    log = json.loads((out / "log.json").read_text())
    assert [r["step"] for r in log] == [2, 3]


def test_checkpoints_between_epochs_every_save_minutes(tmp_path, words_dir: Path, capsys) -> None:
    """``--save-minutes``: the checkpoint and weights are also written between epoch ends (without
    validation), so a call killed by its time limit resumes from its last minutes; 0 turns it off."""
    out = _train(tmp_path, words_dir, "--max-steps", "4", "--save-minutes", "1e-6", epoch_steps=100)
    saved = [line for line in capsys.readouterr().out.splitlines() if line.endswith("checkpoint saved")]
    assert saved == [f"step {k}: checkpoint saved" for k in (1, 2, 3)]  # step 4 ends the run: a full save
    assert [r["step"] for r in json.loads((out / "log.json").read_text())] == [4]
    _train(tmp_path, words_dir, "--max-steps", "5", "--resume", str(out / "checkpoint"), "--save-minutes", "0",
           epoch_steps=100)
    assert "checkpoint saved" not in capsys.readouterr().out
    assert [r["step"] for r in json.loads((out / "log.json").read_text())] == [4, 5]


def test_training_with_echo_counts_fresh_samples(tmp_path, words_dir: Path) -> None:
    """``echo``: 3 steps per generated batch; the log keeps steps x batch and the generated samples apart."""
    out = _train(tmp_path, words_dir, "--max-steps", "6", echo=3, echo_window=2, epoch_steps=6)
    log = json.loads((out / "log.json").read_text())[-1]
    assert log["step"] == 6
    assert log["samples"] == 6 * 4 and log["fresh_samples"] == 2 * 4


def test_frozen_backbone_does_not_move(tmp_path, words_dir: Path) -> None:
    """``freeze``: the named submodules keep their weights and BatchNorm statistics; the rest trains."""
    from safetensors.torch import load_file, save_file

    from vision.models import get_model
    from vision.training.recognition import freeze

    init = get_model("crnn_mobilenet_small", weights=None, hidden=16, proj=32).state_dict()
    save_file(init, str(tmp_path / "init.safetensors"))
    out = _train(tmp_path, words_dir, "--max-steps", "3", "--init", str(tmp_path / "init.safetensors"),
                 freeze=["backbone"], lr=0.01)
    trained = load_file(str(out / "weights.safetensors"))
    backbone = [k for k in init if k.startswith("backbone.")]
    assert any(k.endswith("running_mean") for k in backbone)
    assert all(torch.equal(trained[k], init[k]) for k in backbone)
    assert not torch.equal(trained["head.weight"], init["head.weight"])
    with pytest.raises(ValueError, match="no submodule"):
        freeze(get_model("crnn_mobilenet_small", weights=None), ("encoder",))


def test_training_logs_real_crop_validation(tmp_path, words_dir: Path) -> None:
    """``val_crops``: a real crop set read through the inference predictor each epoch, logged beside the
    synthetic validation."""
    from PIL import Image

    root = tmp_path / "crops"
    (root / "images").mkdir(parents=True)
    (root / "gt").mkdir()
    fonts = discover_fonts([DEJAVU], include_system=False)
    ids = []
    for i, word in enumerate(["apple", "banana", "cherry"]):
        img = WordRenderer(fonts, TextSampler(Corpus.from_dir(words_dir)), WordSynthConfig(max_width=192)).render(
            word, np.random.default_rng(i))
        Image.fromarray(img).convert("RGB").save(root / "images" / f"c{i}.png")
        h, w = img.shape[:2]
        (root / "gt" / f"c{i}.json").write_text(json.dumps({
            "id": f"c{i}", "image": f"images/c{i}.png", "width": w, "height": h, "level": "word",
            "words": [{"text": word, "polygon": [[0, 0], [w, 0], [w, h], [0, h]], "ignore": False}]}))
        ids.append(f"c{i}")
    (root / "index.json").write_text(json.dumps({"set": "tiny", "kind": "crop", "level": "word", "ids": ids}))
    out = _train(tmp_path, words_dir, "--max-steps", "2", val_crops=str(root))
    record = json.loads((out / "log.json").read_text())[-1]
    assert 0.0 <= record["real_word_acc"] <= 1.0 and record["real_cer"] >= 0.0
    assert {"val_word_acc", "real_word_acc_cased"} <= record.keys()


def test_training_distils_from_a_teacher(tmp_path, words_dir: Path, capsys) -> None:
    """``teacher``: a trained recognizer's weights file (here a tiny random CRNN) reads every batch and the
    run trains and saves as usual; a missing teacher file stops the run with the path named."""
    from safetensors.torch import save_file

    from vision.models import get_model

    teacher = get_model("crnn_mobilenet_small", weights=None, hidden=16, proj=32)
    save_file(teacher.state_dict(), str(tmp_path / "teacher.safetensors"))
    fields = {"teacher": "crnn_mobilenet_small", "teacher_model": {"hidden": 16, "proj": 32},
              "teacher_weights": str(tmp_path / "teacher.safetensors"), "distill_temperature": 2.0}
    out = _train(tmp_path, words_dir, "--max-steps", "2", **fields)
    log = json.loads((out / "log.json").read_text())
    assert log[-1]["step"] == 2 and np.isfinite(log[-1]["val_cer"])
    assert (out / "weights.safetensors").is_file()
    assert "teacher: crnn_mobilenet_small" in capsys.readouterr().out
    missing = str(tmp_path / "missing.safetensors")
    with pytest.raises(Exception, match="missing.safetensors"):
        _train(tmp_path, words_dir, "--max-steps", "1", **{**fields, "teacher_weights": missing})


class _FailingBackward(torch.autograd.Function):
    """Identity forward whose backward raises, as Inductor's dynamic-width backward did on the H100."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        raise RuntimeError("shape '[1536, 256]' is invalid for input of size 32")


def test_compiler_failure_in_backward_falls_back_to_eager(tmp_path, words_dir: Path, monkeypatch, capsys) -> None:
    """A compiled step that fails in its backward is redone eagerly and training goes on (static shapes asked)."""
    asked: list[dict] = []

    def fake_compile(model: torch.nn.Module, **kwargs: object):
        asked.append(kwargs)
        return lambda images: _FailingBackward.apply(model(images))

    monkeypatch.setattr(torch, "compile", fake_compile)
    out = _train(tmp_path, words_dir, "--max-steps", "3", compile=True)
    log = json.loads((out / "log.json").read_text())
    assert log[-1]["step"] == 3 and np.isfinite(log[-1]["val_cer"])
    assert asked == [{"dynamic": False}]
    assert "torch.compile failed (RuntimeError" in capsys.readouterr().out


def test_enumerations_are_off_by_default_and_drawn_when_weighted(words_dir: Path) -> None:
    """``enumeration`` (numbered items such as ``128.``) has weight 0, so existing recipes draw the same texts;
    a sampler weighting it draws them, always ending in a sign or bracketed, in the vocabulary."""
    corpus = Corpus.from_dir(words_dir)
    assert "enumeration" not in TextSampler(corpus).kinds
    texts = [TextSampler(corpus, weights={"enumeration": 1.0})._enumeration(np.random.default_rng([3, i]))
             for i in range(300)]
    assert all(t[-1] in ".,):;" or t.startswith("(") for t in texts)
    assert all(set(t) <= set(VOCAB) for t in texts)
    assert sum(t[:-1].isdigit() and t.endswith(".") for t in texts) > 100  # mostly "N."
    mixed = TextSampler(corpus, weights={"enumeration": 1.0})  # about half of all draws
    rng = np.random.default_rng(0)
    numbered = sum(bool(re.fullmatch(r"\(?\d+\)?[.,):;]?", mixed(rng))) for _ in range(400))
    assert 120 <= numbered <= 320
