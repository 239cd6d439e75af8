"""The detector's MobileNetV3-large (``vision.models.mobilenet_v3``) against torchvision's, the reference it
replaces in inference processes, and the roi_align kernel loaded without ``torchvision.ops``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch

from vision.models.mobilenet_v3 import mobilenet_v3_large_features


def _reference() -> torch.nn.Sequential:
    from torchvision.models import mobilenet_v3_large

    return mobilenet_v3_large(weights=None).features[:16]


def _randomise(module: torch.nn.Module, seed: int) -> None:
    """Random weights and BatchNorm statistics, so that every parameter and buffer matters."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in module.state_dict().items():
            if t.dtype.is_floating_point:
                t.copy_(torch.rand(t.shape, generator=g) * 0.5 + 0.5 if "running_var" in name
                        else torch.randn(t.shape, generator=g) * 0.2)


def test_same_layout_as_torchvision():
    ours, ref = mobilenet_v3_large_features().state_dict(), _reference().state_dict()
    assert list(ours) == list(ref)
    assert all(ours[k].shape == ref[k].shape for k in ref)


def test_same_outputs_and_batchnorm_updates_as_torchvision():
    """Eval mode: fp32 outputs within 1e-5 on fresh inputs; train mode: the same outputs and the same running
    statistics afterwards (torchvision's BatchNorm eps 0.001 and momentum 0.01)."""
    ref = _reference()
    _randomise(ref, 0)
    ours = mobilenet_v3_large_features()
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 3, 96, 160, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref.eval(), ours.eval()
        torch.testing.assert_close(ours(x), ref(x), rtol=0, atol=1e-5)
        ref.train(), ours.train()
        torch.testing.assert_close(ours(x), ref(x), rtol=0, atol=1e-5)
    for k, v in ref.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[k], v, rtol=0, atol=1e-6)


def test_roi_align_kernel_matches_torchvision_ops():
    from torchvision.ops import roi_align

    from vision.ops.crops import roi_align_kernel

    g = torch.Generator().manual_seed(2)
    pages = torch.rand(2, 3, 60, 90, generator=g)
    xy = torch.rand(7, 2, generator=g) * torch.tensor([60.0, 40.0])
    rois = torch.cat([torch.randint(0, 2, (7, 1), generator=g).float(), xy,
                      xy + 5 + torch.rand(7, 2, generator=g) * 20], dim=1)
    expected = roi_align(pages, rois, (16, 48), 1.0, -1, True)
    torch.testing.assert_close(roi_align_kernel()(pages, rois, 1.0, 16, 48, -1, True), expected, rtol=0, atol=0)


def test_the_torch_ocr_path_imports_neither_torchvision_nor_dynamo():
    """A process running the OCR's torch models, device crops and padded batches (what a GPU process runs;
    here on the CPU) never imports torchvision or ``torch._dynamo``: seconds of every such process's start."""
    code = (
        "import sys, cv2, numpy as np, vision\n"
        "from vision.pipelines.ocr.options import OCROptions\n"
        "p = vision.ocr_predictor(options=OCROptions(device='cpu', onnx=False, crops_on_device=True))\n"
        "p.pipeline['detect'].predictor.pad_batches = True\n"  # the CUDA default of both predictors
        "p.pipeline['recognize'].predictor.pad_batches = True\n"
        "img = np.full((200, 600, 3), 255, np.uint8)\n"
        "cv2.putText(img, 'Hello world 123', (20, 100), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (0, 0, 0), 3)\n"
        "print([w.value for w in p([img]).pages[0].words])\n"
        "print(sorted(m for m in ('torchvision', 'torchvision.ops', 'torch._dynamo') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert run.returncode == 0, run.stderr[-2000:]
    words, imported = run.stdout.strip().splitlines()[-2:]
    assert words == "['Hello', 'world', '123']"  # the words went through roi_align on the device path
    assert imported == "[]"


def test_rows_are_marked_dynamic_once_dynamo_is_loaded():
    """Compiling imports ``torch._dynamo``; then padded batches are marked for it (one graph per shape)."""
    import torch._dynamo  # noqa: F401 - what torch.compile does

    from vision.fast.compile import mark_dynamic_rows

    x = mark_dynamic_rows(torch.zeros(4, 3, 32, 64))
    assert 0 in getattr(x, "_dynamo_weak_dynamic_indices", set())
