"""Weight averaging ("model soup"): one model whose weights are the mean of several fine-tunes of one start.

``python -m vision.training.soup OUT.safetensors IN1.safetensors IN2.safetensors ... [--dtype float16]``

Fine-tunes of the same weights stay in one basin of the loss, so their uniform average is a model of the
same architecture (no extra inference cost) that is usually at least as accurate as its ingredients and
more robust to a shift of the data (Wortsman et al., 2022). The recognizers here are trained only on
synthetic crops, so that shift is what real scans are. BatchNorm running statistics are averaged too;
integer buffers (``num_batches_tracked``) are taken from the first file.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from vision.models._registry import load_weights
from vision.training.checkpoint import save_weights

__all__ = ["main", "uniform_soup"]

_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def uniform_soup(states: Sequence[Mapping[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The mean of ``states`` (float tensors averaged in float32); every state must hold the same names and
    shapes, else ``ValueError`` names the first difference."""
    if not states:
        raise ValueError("a soup needs at least one state dict")
    first = states[0]
    for i, state in enumerate(states[1:], 1):
        if state.keys() != first.keys():
            diff = sorted(set(state) ^ set(first))[:3]
            raise ValueError(f"state {i} holds other tensors than state 0 (e.g. {diff})")
        for name, tensor in state.items():
            if tensor.shape != first[name].shape:
                raise ValueError(f"{name}: shape {tuple(tensor.shape)} in state {i}, "
                                 f"{tuple(first[name].shape)} in state 0")
    return {name: torch.stack([s[name].float() for s in states]).mean(0) if value.is_floating_point()
            else value for name, value in first.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.training.soup", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="safetensors file to write")
    parser.add_argument("weights", type=Path, nargs="+", help="safetensors files to average")
    parser.add_argument("--dtype", choices=sorted(_DTYPES), default="float32", help="storage dtype of floats")
    args = parser.parse_args(argv)
    soup = uniform_soup([load_weights(p) for p in args.weights])
    dtype = _DTYPES[args.dtype]
    save_weights({k: v.to(dtype) if v.is_floating_point() else v for k, v in soup.items()}, args.out,
                 metadata={"soup_of": ", ".join(p.name for p in args.weights)})
    print(f"{args.out}: uniform soup of {len(args.weights)} files, {len(soup)} tensors, {args.dtype}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
