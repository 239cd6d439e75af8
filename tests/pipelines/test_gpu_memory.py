"""Free GPU memory from ``nvidia-smi``'s answer (``vision.pipelines.ocr.gpu_memory``)."""

from __future__ import annotations

import pytest

from vision.pipelines.ocr.gpu_memory import free_bytes, torch_has_cuda

TWO = "0, GPU-aaaa-1111, NVIDIA H200, 140000\n1, GPU-bbbb-2222, NVIDIA H200, 1000\n"
MiB = 1024**2


def test_free_bytes_by_index(monkeypatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert free_bytes(None, smi_output=TWO) == 140000 * MiB
    assert free_bytes("cuda", smi_output=TWO) == 140000 * MiB
    assert free_bytes("cuda:1", smi_output=TWO) == 1000 * MiB
    assert free_bytes("cuda:2", smi_output=TWO) is None  # no such device: torch says what is wrong
    assert free_bytes(None, smi_output="") == 0  # the driver sees no GPU


def test_free_bytes_follows_cuda_visible_devices(monkeypatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert free_bytes("cuda:0", smi_output=TWO) == 1000 * MiB
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-aaaa")
    assert free_bytes(None, smi_output=TWO) == 140000 * MiB
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert free_bytes(None, smi_output=TWO) == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    assert free_bytes(None, smi_output=TWO) == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-cccc")
    assert free_bytes(None, smi_output=TWO) is None


@pytest.mark.parametrize("answer", [
    "0, GPU-aaaa, NVIDIA H200, [N/A]\n",  # MIG mode: no per-device figure
    "0, GPU-aaaa, NVIDIA H200, 140000\n1, GPU-bbbb, NVIDIA A100, 80000\n",  # mixed models
    "garbage",
])
def test_free_bytes_defers_to_torch_when_unsure(monkeypatch, answer: str) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert free_bytes("cuda:1" if "A100" in answer else None, smi_output=answer) is None


def test_torch_has_cuda_agrees_with_torch() -> None:
    import torch

    assert torch_has_cuda() == (torch.version.cuda is not None)
