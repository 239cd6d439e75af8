"""Text-detection throughput along the fast-path ladder, each row beside fp32 eager measured in the same run.

    python benchmarks/detection.py --device cpu  [--pages 12] [--out detection-cpu.json]
    python benchmarks/detection.py --device cuda [--pages 32] [--out detection-cuda.json]

Pages: synthetic forms, letters, receipts and articles rendered with Pillow (FUNSD-like 762 x 1000 px), fed at
the default input size (the predictor's 1024 x 768 / 1024 x 512 buckets). Weights: the shipped default
(``--weights PATH`` or ``random`` for others).

- CPU rows (``torch.set_num_threads(--threads)``, batch 1): end-to-end pages/s of the predictor (resize,
  model, post-processing) for fp32 eager, ONNX Runtime fp32 and ONNX Runtime int8 (dynamic).
- CUDA rows: model pages/s (a batch of pages already on the GPU as uint8; normalisation + forward, CUDA
  synchronised, compile warm-up excluded) for fp32 eager, bf16 eager and bf16 + torch.compile; plus
  end-to-end pages/s of the bf16 + compile predictor (post-processing runs on one CPU core).

Every row carries ``f1_vs_fp32``: F1 at IoU 0.5 between its word boxes and fp32 eager's on the same pages.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.evaluation.metrics import Counts, detection_counts  # noqa: E402
from vision.models import get_model  # noqa: E402
from vision.fast.compile import compile_model  # noqa: E402
from vision.fast.onnx import OnnxRunner, export_onnx  # noqa: E402
from vision.fast.precision import to_bf16  # noqa: E402
from vision.fast.quantize import quantize_onnx_int8  # noqa: E402
from vision.models.detection.dbnet import DBProbability  # noqa: E402
from vision.predictors.detection.predictor import DetectionPredictor, detection_predictor, fit_page  # noqa: E402


def render_pages(n: int, layouts: tuple[str, ...], seed: int = 0) -> list[np.ndarray]:
    """``n`` synthetic pages 1000 px tall (762 wide, receipts narrower), cycling through ``layouts``."""
    import cv2

    from vision.training.detection_data import PageWords
    from vision.training.synth.fonts import discover_fonts
    from vision.training.synth.pages import PageRenderer

    dirs = [d for d in (REPO / ".carry/det/fonts", REPO / ".cache/fonts") if d.is_dir()][:1]
    dict_dir = next((str(d) for d in (REPO / ".carry/det/dict", REPO / ".cache/dict") if d.is_dir()), "")
    renderer = PageRenderer(discover_fonts(dirs), PageWords(dict_dir))
    rng = np.random.default_rng(seed)
    pages = []
    for i in range(n):
        page = renderer(rng, layouts[i % len(layouts)]).image
        h, w = page.shape[:2]
        size = (762, 1000) if layouts[i % len(layouts)] != "receipt" else (int(1000 * w / h), 1000)
        pages.append(cv2.resize(page, size, interpolation=cv2.INTER_AREA))
    return pages


def agreement(ref, other) -> float:
    total = Counts()
    for a, b in zip(ref, other):
        total = total + detection_counts(a.boxes.astype(np.float64), b.boxes.astype(np.float64), 0.5)
    return round(total.f1, 4)


def timed(fn: Callable[[], Any], repeat: int, sync: bool) -> float:
    sync = sync and torch.cuda.is_available()
    fn()
    if sync:
        torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(repeat):
        fn()
    if sync:
        torch.cuda.synchronize()
    return (time.perf_counter() - t) / repeat


def cpu_rows(args: argparse.Namespace, pages: list[np.ndarray]) -> list[dict[str, Any]]:
    torch.set_num_threads(args.threads)
    base = detection_predictor(args.arch, weights=args.weights, device="cpu", batch_size=1, onnx=False)  # eager
    ref = base(pages)
    rows = [
        {
            "row": "fp32 eager",
            "pages_per_s": round(len(pages) / timed(lambda: base(pages), 1, False), 3),
            "f1_vs_fp32": 1.0,
        }
    ]
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = export_onnx(base.model, Path(tmp) / "det.onnx", torch.zeros(1, 3, 256, 256),
                                dynamic_axes=ONNX_AXES, output_name="prob")
        int8_path = quantize_onnx_int8(onnx_path, Path(tmp) / "det_int8.onnx")
        for name, path in (("onnxruntime fp32", onnx_path), ("onnxruntime int8 dynamic", int8_path)):
            cfg = base.model.model.config
            pred = DetectionPredictor(
                OnnxRunner(path, threads=args.threads),
                mean=cfg.mean,
                std=cfg.std,
                device=torch.device("cpu"),
                batch_size=1,
                params=base.params,
            )
            out = pred(pages)
            rows.append(
                {
                    "row": name,
                    "pages_per_s": round(len(pages) / timed(lambda: pred(pages), 1, False), 3),
                    "f1_vs_fp32": agreement(ref, out),
                }
            )
    return rows


def cuda_rows(
    args: argparse.Namespace, pages: list[np.ndarray], dev: torch.device = torch.device("cuda")
) -> list[dict[str, Any]]:
    model = get_model(args.arch or "db_mobilenet_v3_large", weights=args.weights)
    cfg = model.config
    fp32 = DBProbability(model).to(dev).eval()
    ref_pred = DetectionPredictor(fp32, mean=cfg.mean, std=cfg.std, device=dev, batch_size=len(pages))
    ref = ref_pred(pages)
    bf16 = to_bf16(
        DBProbability(get_model(args.arch or "db_mobilenet_v3_large", weights=args.weights)).to(dev)
    )
    compiled = compile_model(bf16.eval(), dynamic=False)
    n = len(pages)  # one batch of FUNSD-sized pages: a single compiled shape (n, 3, 1024, 768)
    canvases = np.stack([fit_page(p, (1024, 768))[0] for p in pages])
    batch = torch.from_numpy(canvases).to(dev)
    rows = []
    for name, m, dtype in (
        ("fp32 eager", fp32, torch.float32),
        ("bf16 eager", bf16, torch.bfloat16),
        ("bf16 + compile", compiled, torch.bfloat16),
    ):
        pred = DetectionPredictor(m, mean=cfg.mean, std=cfg.std, device=dev, dtype=dtype, batch_size=n)
        mean, std = pred._mean, pred._std

        def step() -> None:
            with torch.inference_mode():
                m(
                    ((batch.permute(0, 3, 1, 2).float() - mean) / std).to(dtype).contiguous()
                )  # as preprocess()

        t = timed(step, args.repeat, True)  # timed() runs once untimed first: compilation is excluded
        out = pred(pages)
        rows.append(
            {"row": name, "batch": n, "model_pages_per_s": round(n / t, 1), "f1_vs_fp32": agreement(ref, out)}
        )
    pred = DetectionPredictor(
        compiled, mean=cfg.mean, std=cfg.std, device=dev, dtype=torch.bfloat16, batch_size=n
    )
    e2e = timed(lambda: pred(pages), 1, True)
    rows.append(
        {
            "row": "bf16 + compile, end to end (1 CPU core post-processing)",
            "pages_per_s": round(len(pages) / e2e, 1),
            "f1_vs_fp32": agreement(ref, pred(pages)),
        }
    )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--arch", default=None)
    p.add_argument("--weights", default="default", help="'default', a safetensors path, or 'random'")
    p.add_argument(
        "--pages", type=int, default=None, help="pages (default: 12 on CPU, 32 = one batch on CUDA)"
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    args.weights = None if args.weights == "random" else args.weights
    load_before = os.getloadavg()[0]  # the 2-core dev machine is shared: record how busy it was
    if args.device == "cpu":
        pages = render_pages(args.pages or 12, ("form", "letter", "receipt", "article"))
    else:
        pages = render_pages(args.pages or 32, ("form", "letter", "article"))
    rows = cpu_rows(args, pages) if args.device == "cpu" else cuda_rows(args, pages)
    device = torch.cuda.get_device_name() if args.device == "cuda" else f"cpu x{args.threads} threads"
    report = {
        "device": device,
        "torch": torch.__version__,
        "pages": len(pages),
        "rows": rows,
        "loadavg_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    print(f"{'row':<58} {'pages/s':>10} {'f1 vs fp32':>11}")
    for r in rows:
        speed = r.get("model_pages_per_s", r.get("pages_per_s"))
        print(f"{r['row']:<58} {speed:>10} {r['f1_vs_fp32']:>11}")
    out = Path(args.out or f"detection-{args.device}.json")
    out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
