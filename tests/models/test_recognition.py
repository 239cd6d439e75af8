"""Recognition models: registry, shapes, configs, vocabulary."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from vision.models import default_model, get_entry, get_model, list_models
from vision.models.recognition.vocab import (
    BLANK,
    CHAR_TO_INDEX,
    CHECKBOX_CHECKED,
    CHECKBOX_EMPTY,
    NUM_CLASSES,
    VOCAB,
    decode,
    encode,
    normalize_text,
)

RECOGNITION = list_models("recognition")


def test_at_least_two_architectures_and_a_default() -> None:
    assert {"crnn_mobilenet_small", "crnn_transformer_small"} <= set(RECOGNITION)
    assert default_model("recognition") == "crnn_mobilenet_small"


@pytest.mark.parametrize("name", RECOGNITION)
@pytest.mark.parametrize("width", [32, 100, 256])
def test_forward_shape(name: str, width: int) -> None:
    model = get_model(name, weights=None).eval()
    with torch.inference_mode():
        logits = model(torch.rand(2, 3, 32, width))
    assert logits.shape == (2, width // 4, NUM_CLASSES)
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("name", RECOGNITION)
def test_config_is_frozen_and_overridable(name: str) -> None:
    model = get_model(name, weights=None, dropout=0.0)
    assert dataclasses.is_dataclass(model.config) and model.config.dropout == 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.config.dropout = 0.5  # type: ignore[misc]
    assert get_entry(name).task == "recognition"


def test_transformer_padding_mask() -> None:
    model = get_model("crnn_transformer_small", weights=None).eval()
    x = torch.rand(2, 3, 32, 64)
    with torch.inference_mode():
        plain = model(x)
        none_masked = model(x, key_padding=torch.zeros(2, 16, dtype=torch.bool))
        masked = model(x, key_padding=torch.arange(16).expand(2, 16) >= 10)
    torch.testing.assert_close(plain, none_masked)
    assert not torch.allclose(plain[:, :10], masked[:, :10])


def test_transformer_local_window() -> None:
    """``window``: a frame's encoding ignores frames farther than ``window`` per block (one block: a change
    past the band leaves frame 0 as it was); a window spanning the whole sequence is global attention."""
    from vision.models.recognition.transformer import _Block

    torch.manual_seed(0)
    model = get_model("crnn_transformer_small", weights=None, depth=1, window=3, dropout=0.0).eval()
    x = torch.randn(1, 12, model.config.dim)
    far = x.clone()
    far[:, 4:] += torch.randn(1, 8, model.config.dim)  # not a constant shift, which the pre-norm removes
    pos = torch.arange(12)
    band = (pos[:, None] - pos[None, :]).abs() <= 3
    block: _Block = model.blocks[0]
    with torch.inference_mode():
        torch.testing.assert_close(block(x, band)[:, 0], block(far, band)[:, 0])
        assert not torch.allclose(block(x, None)[:, 0], block(far, None)[:, 0])
        images = torch.rand(2, 3, 32, 64)  # 16 frames
        wide = get_model("crnn_transformer_small", weights=None, window=16).eval()
        glob = get_model("crnn_transformer_small", weights=None).eval()
        glob.load_state_dict(wide.state_dict())
        torch.testing.assert_close(wide(images), glob(images))
        local = get_model("crnn_transformer_small", weights=None, window=2).eval()
        local.load_state_dict(wide.state_dict())
        assert not torch.allclose(local(images), glob(images))
        masked = local(images, key_padding=torch.arange(16).expand(2, 16) >= 10)
        assert torch.isfinite(masked).all()


def test_hybrid_starts_as_the_crnn_it_loads() -> None:
    """The hybrid (CRNN trunk + zero-initialised Transformer blocks) built on a CRNN's weights reads exactly
    as that CRNN; once its blocks' output projections are no longer zero it reads differently."""
    from vision.training.checkpoint import load_matching

    crnn = get_model("crnn_mobilenet_small", weights=None).eval()
    hybrid = get_model("crnn_transformer_small", weights=None, rnn_hidden=160, depth=2).eval()
    loaded, kept = load_matching(hybrid, crnn.state_dict())
    assert len(loaded) == len(crnn.state_dict()) and {k.split(".")[0] for k in kept} == {"blocks"}
    x = torch.rand(3, 3, 32, 96)
    with torch.inference_mode():
        torch.testing.assert_close(hybrid(x), crnn(x), rtol=0, atol=0)
    with torch.no_grad():
        for block in hybrid.blocks:
            torch.nn.init.normal_(block.out.weight, std=0.02)
        changed = hybrid(x)
    assert changed.shape == (3, 24, NUM_CLASSES) and not torch.allclose(changed, crnn(x))


def test_vocabulary() -> None:
    assert BLANK == 0 and NUM_CLASSES == len(VOCAB) + 1 and CHAR_TO_INDEX[VOCAB[0]] == 1
    for ch in "aZ09 ~éőŁß€£¥§°±×÷«»“”‘’–—" + CHECKBOX_EMPTY + CHECKBOX_CHECKED:
        assert ch in CHAR_TO_INDEX, ch
    assert decode(encode("Žluťoučký kůň: 12,50 €")) == "Žluťoučký kůň: 12,50 €"
    assert BLANK not in encode("any text")


def test_normalize_folds_variants_and_drops_unknown() -> None:
    assert normalize_text("\u2612 \u2713 \u25a1") == f"{CHECKBOX_CHECKED} {CHECKBOX_CHECKED} {CHECKBOX_EMPTY}"
    assert normalize_text("e\u0301te\u0301\u00a0\u2212 5") == "été - 5"  # NFC, NBSP, minus sign
    assert normalize_text("中文ok") == "ok"


def test_block_tables_by_name() -> None:
    """JSON configs name a block table; ``rect_late`` keeps 2-px columns until block 9 yet emits W / 4 frames
    with the same weights shapes as ``rect`` (so one table's weights initialise the other)."""
    from vision.models.recognition.backbone import BLOCK_TABLES, BackboneConfig, MobileNetV3Backbone

    assert BackboneConfig(blocks="rect_late").blocks == BLOCK_TABLES["rect_late"]
    with pytest.raises(ValueError, match="unknown block table"):
        BackboneConfig(blocks="nope")
    late, rect = (MobileNetV3Backbone(BackboneConfig(blocks=name)).eval() for name in ("rect_late", "rect"))
    assert {k: v.shape for k, v in late.state_dict().items()} == {k: v.shape for k, v in rect.state_dict().items()}
    assert late.features[1].block[0][0].stride == (2, 1)  # first block (depthwise conv): the width is kept
    x = torch.rand(2, 3, 32, 96)
    with torch.no_grad():
        assert late(x).shape == rect(x).shape == (2, 24, 576)
    assert get_model("crnn_mobilenet_small", weights=None).config.backbone.blocks == BLOCK_TABLES["rect_late"]
