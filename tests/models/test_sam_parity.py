"""fp32 parity with the reference ``segment-anything`` package on the same random weights.

ViT-B widths (768, 12 heads) at 256 px and 2 blocks (windowed + global) keep this cheap on CPU; the full-size layout is checked
key for key in ``test_sam_checkpoint.py``. Measured: low-res logits and IoU predictions agree to 7e-7.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _sam_ref import SMALL_B, random_prompts, reference_sam

from vision.predictors.segmentation.predictor import SamPredictor
from vision.models.segmentation.sam import Sam
from vision.fast.sam import FastOptions
from vision.ops.masks import mask_iou

ATOL = 1e-5  # fp32, measured max |diff| 7e-7 on logits of magnitude ~0.6


@pytest.fixture(scope="module")
def pair() -> tuple[torch.nn.Module, torch.nn.Module]:
    ref = reference_sam(SMALL_B)
    ours = Sam(SMALL_B).eval()  # the reduced config is no official variant: load the reference's dict into it
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ref, ours


def _reference_decode(ref, emb, points, labels, boxes, multimask: bool):
    logits, ious = [], []
    for i in range(emb.shape[0]):
        sparse, dense = ref.prompt_encoder(points=(points[i], labels[i]), boxes=boxes[i], masks=None)
        lg, io = ref.mask_decoder(emb[i:i + 1], ref.prompt_encoder.get_dense_pe(), sparse, dense, multimask)
        logits.append(lg)
        ious.append(io)
    return torch.stack(logits), torch.stack(ious)


@pytest.mark.parametrize(("impl", "n_images"), [("math", 1), ("sdpa", 2)])
def test_model_parity(pair, impl: str, n_images: int) -> None:
    ref, ours = pair
    for m in ours.image_encoder.modules():
        if hasattr(m, "impl"):
            m.impl = impl
    images = torch.randn(n_images, 3, 256, 256)
    points, labels, boxes = random_prompts(n_images, 3, 2, 256, seed=1)
    with torch.inference_mode():
        out = ours(images, points, labels, boxes, multimask=True)
        emb = ref.image_encoder(images)
        ref_logits, ref_iou = _reference_decode(ref, emb, points, labels, boxes, True)
    assert out.low_res_logits.shape == (n_images, 3, 3, 64, 64)
    torch.testing.assert_close(out.low_res_logits, ref_logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(out.iou_predictions, ref_iou, atol=ATOL, rtol=0)
    assert mask_iou(out.low_res_logits > 0, ref_logits > 0).min() > 0.99


def test_points_only_and_mask_input_parity(pair) -> None:
    """Points without boxes (the padding token path) and a mask prompt, single-mask output."""
    ref, ours = pair
    images = torch.randn(1, 3, 256, 256)
    points, labels, _ = random_prompts(1, 4, 3, 256, seed=2)
    labels[0, 0, 2] = -1  # an explicit padding point
    masks = torch.randn(4, 1, 64, 64)
    with torch.inference_mode():
        emb = ours.encode(images)
        logits, iou = ours.decode(emb, points[0], labels[0], None, masks, multimask=False)
        sparse, dense = ref.prompt_encoder(points=(points[0], labels[0]), boxes=None, masks=masks)
        ref_logits, ref_iou = ref.mask_decoder(ref.image_encoder(images), ref.prompt_encoder.get_dense_pe(),
                                               sparse, dense, False)
    torch.testing.assert_close(logits, ref_logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(iou, ref_iou, atol=ATOL, rtol=0)


def test_predictor_parity(pair) -> None:
    """End to end from a uint8 photo: our on-device antialiased resize vs the reference's PIL resize still
    gives the same masks (IoU > 0.99) and scores."""
    from segment_anything import SamPredictor as RefPredictor

    ref, ours = pair
    rng = np.random.default_rng(0)
    image = np.zeros((300, 200, 3), np.uint8)
    image[...] = rng.integers(0, 255, (1, 1, 3))
    image[60:200, 40:160] = rng.integers(0, 255, 3)  # a flat rectangle on a flat background
    points = np.array([[100.0, 120.0], [20.0, 20.0]])
    labels = np.array([1, 0])
    box = np.array([30.0, 50.0, 170.0, 210.0])
    pred = SamPredictor(ours, fast=FastOptions(attention="math"), device="cpu")
    pred.set_image(image)
    got = pred.predict(points=points, labels=labels, boxes=box, multimask=True)
    rp = RefPredictor(ref)
    rp.set_image(image)
    masks, scores, _ = rp.predict(point_coords=points, point_labels=labels, box=box, multimask_output=True)
    assert got.masks.shape == (1, 3, 300, 200)
    iou = mask_iou(torch.from_numpy(got.masks[0]), torch.from_numpy(masks))
    assert iou.min() > 0.99, iou
    np.testing.assert_allclose(got.scores[0], scores, atol=2e-3)  # resize differences only
    regions = got.regions()
    assert len(regions) == 1 and regions[0].kind == "mask" and regions[0].mask.shape == (300, 200)
