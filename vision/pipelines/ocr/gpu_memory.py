"""Free memory of a CUDA device read without importing torch or opening a CUDA context.

``vision ocr DIR -o OUT`` on a GPU sizes its replica processes (:func:`~vision.pipelines.ocr.replicas.
device_replicas`) by the device's free memory before it starts them. Asking torch costs the main process
seconds (``import torch``, then a CUDA context) that every replica pays again after it, in series with
them; ``nvidia-smi`` answers in a fraction of that. Any doubt (no ``nvidia-smi``, MIG instances, devices
whose order CUDA and ``nvidia-smi`` may see differently, a torch built without CUDA) answers ``None``, and
the caller asks torch.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["free_bytes", "torch_has_cuda"]

_QUERY = ("--query-gpu=index,uuid,name,memory.free", "--format=csv,noheader,nounits")


def torch_has_cuda() -> bool:
    """Whether the installed torch is a CUDA build (its ``libtorch_cuda`` library is there), without
    importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return False
    return any((Path(spec.origin).parent / "lib").glob("libtorch_cuda*"))


def _rows(text: str) -> list[tuple[str, str, str, int]]:
    rows = []
    for line in text.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4 or not parts[3].isdigit():
            raise ValueError(f"unexpected nvidia-smi line {line!r}")
        rows.append((parts[0], parts[1], parts[2], int(parts[3]) * 1024**2))
    return rows


def free_bytes(device: str | None, *, smi_output: str | None = None) -> int | None:
    """Free bytes of CUDA ``device`` (``"cuda"``, ``"cuda:1"``, ``None`` for the first visible one); 0 when
    no GPU is visible; ``None`` when only torch can tell (see the module docstring).

    ``smi_output`` stands in for ``nvidia-smi``'s answer (tests)."""
    index = 0 if device in (None, "cuda") else int(str(device).split(":", 1)[1])
    if smi_output is None:
        exe = shutil.which("nvidia-smi")
        if exe is None or not torch_has_cuda():
            return None
        try:
            smi_output = subprocess.run([exe, *_QUERY], capture_output=True, text=True, timeout=20,
                                        check=True).stdout
        except (OSError, subprocess.SubprocessError):
            return None
    try:
        rows = _rows(smi_output)
    except ValueError:
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        wanted = [v.strip() for v in visible.split(",") if v.strip()]
        if not wanted or wanted[0].startswith("-"):
            return 0
        if index >= len(wanted) or wanted[index].startswith("MIG"):
            return None
        match = [r for r in rows if r[0] == wanted[index] or r[1].startswith(wanted[index])]
        return match[0][3] if len(match) == 1 else None
    if not rows:
        return 0
    if index >= len(rows) or len({r[2] for r in rows}) > 1:  # mixed models: CUDA may order them otherwise
        return None
    return rows[index][3]
