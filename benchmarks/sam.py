"""SAM image-encoder throughput and peak memory along the speed ladder, beside the reference package's fp32.

    python benchmarks/sam.py [--models vit_b vit_h] [--batch-sizes 32 8 1] [--budget 420] [--out sam_bench.json]

Random weights (the same for the reference and ours: the reference's state dict is loaded strictly into
ours), random 1024 x 1024 inputs. Rows: ``ref-fp32`` (segment-anything, eager fp32) and our rungs from
:data:`vision.fast.sam.LADDER` (``fp32`` ... ``sparse24``). Each row: images/s of the
encoder (CUDA events around up to 5 / 10 / 30 batches at bs 32 / 8 / 1, after a warm-up that includes compilation), peak allocated
memory (the row's weights and activations, inputs and other resident models excluded), and agreement with our fp32 eager on the first two images of the batch: relative error of the
embedding and of the low-res mask logits for 4 point prompts, and the IoU of the masks. Rows run in the priority order of :func:`plan` (bs 32 first); ``nested`` is timed on
the decoder (prompts/s, a variable number of prompts per image, one jagged batch vs a loop over images); the
automatic mask generator is timed against the reference's. Work runs in priority order (bs 32 first) until
``--budget`` seconds have passed; what is left is listed as skipped. JSON is rewritten after every row.
"""

from __future__ import annotations

import argparse
import copy
import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.predictors.segmentation.checkpoint import load_sam
from vision.fast.sam import LADDER, apply_fast

ENCODER_RUNGS = ("ref-fp32", "fp32", "bf16", "sdpa", "triton", "float8", "compile", "sparse24", "int8")
# Opt-in rows (named in --rungs): the fused-kernel rung compiled with Inductor's matmul autotuning, without and
# with CUDA graphs (compile_mode of FastOptions).
EXTRA_RUNGS = {"triton-autotune": "max-autotune-no-cudagraphs", "triton-graphs": "max-autotune"}
COMPILED = {"compile", "triton", "float8", "int8", "sparse24", *EXTRA_RUNGS}
ROW_CAP_S = 240  # one row, compilation included; ViT-B's fused-kernel row compiled in 11 s on an H200


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.start, self.rows = args, time.perf_counter(), []
        self.device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"

    def left(self) -> float:
        return self.args.budget - (time.perf_counter() - self.start)

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        print(json.dumps(row), flush=True)
        meta = {"device": self.device, "torch": torch.__version__, "rows": self.rows}
        Path(self.args.out).write_text(json.dumps(meta, indent=1))


def reference_pair(variant: str, device: str = "cuda") -> tuple[torch.nn.Module, torch.nn.Module]:
    """The reference model with randomised position tables, and ours loaded from its state dict."""
    from segment_anything import sam_model_registry

    torch.manual_seed(0)
    with torch.device(device):
        ref = sam_model_registry[variant]().to(device).eval()  # .to(): its pixel_mean/std buffers ignore the context
    with torch.no_grad():
        for name, p in ref.named_parameters():
            if "rel_pos" in name or "pos_embed" in name:
                p.normal_(0, 0.5)
    return ref, load_sam(ref.state_dict(), variant=variant).to(device).eval()


def timed(fn: Callable[[], Any], max_iters: int, target_s: float = 1.5) -> float:
    """Mean seconds per call (CUDA events) over as many calls as fit in ``target_s`` (1..``max_iters``),
    after one untimed call that also sizes the loop."""
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    iters = max(1, min(max_iters, int(target_s / max(time.perf_counter() - t0, 1e-4))))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1000 / iters


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).norm() / b.float().norm())


def agreement(model: Any, emb: torch.Tensor, base: Any, base_emb: torch.Tensor) -> dict[str, float]:
    """Embedding and decoded-mask agreement of ``model`` with ``base`` (our fp32) on the same two images."""
    gen = torch.Generator(device="cuda").manual_seed(1)
    pts = torch.rand(4, 1, 2, device="cuda", generator=gen) * 1024
    lab = torch.ones(4, 1, dtype=torch.int64, device="cuda")
    out = {"embed_rel_err": rel(emb, base_emb)}
    with torch.inference_mode():
        decode = getattr(model, "decode", None)
        lg = (decode(emb[:1], pts, lab) if decode else _ref_decode(model, emb[:1], pts, lab))[0]
        lg0 = base.decode(base_emb[:1].float(), pts, lab)[0]
    out["logits_rel_err"] = rel(lg, lg0)
    a, b = lg.float() > 0, lg0 > 0
    out["mask_iou"] = float(((a & b).sum((-1, -2)) / (a | b).sum((-1, -2)).clamp(min=1)).mean())
    return out


def _ref_decode(ref: Any, emb: torch.Tensor, pts: torch.Tensor, lab: torch.Tensor) -> tuple[torch.Tensor, ...]:
    sparse, dense = ref.prompt_encoder(points=(pts, lab), boxes=None, masks=None)
    return ref.mask_decoder(emb, ref.prompt_encoder.get_dense_pe(), sparse, dense, True)


def peak_bytes(baseline: int, resident_model: Any = None) -> int:
    """The row's peak: its model's weights and activations (the resident reference model counted for its row)."""
    own = sum(p.numel() * p.element_size() for p in resident_model.parameters()) if resident_model is not None else 0
    return torch.cuda.max_memory_allocated() - baseline + own


def encoder_row(bench: Bench, variant: str, rung: str, bs: int, ref: Any, ours: Any, base_emb: torch.Tensor,
                images: torch.Tensor) -> None:
    row: dict[str, Any] = {"model": variant, "rung": rung, "batch": bs}
    need = 75 if rung in COMPILED else 15
    if bench.left() < need:
        bench.add(row | {"skipped": f"time budget ({bench.left():.0f} s left)"})
        return
    model = None
    signal.alarm(int(min(bench.left(), ROW_CAP_S)))  # a stuck compile becomes this row's error, not the run's end
    try:
        torch._dynamo.reset()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        baseline = torch.cuda.memory_allocated()  # resident: reference and fp32 models, inputs
        if rung == "ref-fp32":
            model, encode, dtype = ref, ref.image_encoder, torch.float32
        else:
            options = LADDER[rung] if rung in LADDER else LADDER["triton"].replace(compile_mode=EXTRA_RUNGS[rung])
            model = apply_fast(copy.deepcopy(ours), options)
            encode, dtype = model.image_encoder, options.torch_dtype
        x = images[:bs].to(dtype)
        with torch.inference_mode():
            t0 = time.perf_counter()
            emb = encode(x)
            torch.cuda.synchronize()
            warm = time.perf_counter() - t0
            per_batch = timed(lambda: encode(x), 5 if bs >= 32 else 10 if bs >= 8 else 30)
        row |= {"img_per_s": round(bs / per_batch, 2), "ms_per_batch": round(per_batch * 1000, 2),
                "peak_gib": round(peak_bytes(baseline, ref if rung == "ref-fp32" else None) / 2**30, 2),
                "warmup_s": round(warm, 1)}
        if bs >= 2:
            row |= agreement(model, emb[:2], ours, base_emb)
    except Exception as exc:  # noqa: BLE001 - one failing rung must not stop the run: its error is the row
        row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        signal.alarm(0)
        if model is not None and model is not ref:
            del model
    bench.add(row)


def nested_row(bench: Bench, ours: Any) -> None:
    """Decoder: 8 images with 1..64 single-point prompts each, one jagged batch vs one call per image (bf16)."""
    model = apply_fast(copy.deepcopy(ours), LADDER["sdpa"])
    gen = torch.Generator(device="cuda").manual_seed(2)
    counts = [1, 64, 7, 33, 2, 50, 16, 24]
    emb = torch.randn(len(counts), 256, 64, 64, device="cuda", dtype=torch.bfloat16, generator=gen)
    pts = [torch.rand(n, 1, 2, device="cuda", generator=gen) * 1024 for n in counts]
    lab = [torch.ones(n, 1, dtype=torch.int64, device="cuda") for n in counts]
    with torch.inference_mode():
        loop = lambda: [model.decode(emb[i:i + 1], pts[i], lab[i]) for i in range(len(counts))]
        nest_p = torch.nested.as_nested_tensor(pts, layout=torch.jagged)
        nest_l = torch.nested.as_nested_tensor(lab, layout=torch.jagged)
        nested = lambda: model.decode_nested(emb, nest_p, nest_l)
        t_loop, t_nest = timed(loop, 20), timed(nested, 20)
        diff = max(float((a - b[0]).abs().max()) for a, b in zip(nested()[0].unbind(), loop()))
    total = sum(counts)
    bench.add({"model": "decoder", "rung": "nested", "prompts": total, "loop_prompts_per_s": round(total / t_loop),
               "nested_prompts_per_s": round(total / t_nest), "max_abs_diff": diff})


def amg_row(bench: Bench, ref: Any, ours: Any, device: str = "cuda") -> None:
    """Automatic masks on one 1024 x 768 image, 32 x 32 points, default thresholds: reference vs ours (on the
    GPU: our fp32 and bf16 + SDPA; on the CPU, where bf16 does not pay: our fp32 and fp32 + SDPA)."""
    import numpy as np
    from segment_anything import SamAutomaticMaskGenerator as RefAMG

    from vision.predictors.segmentation.automatic import SamAutomaticMaskGenerator
    from vision.predictors.segmentation.predictor import SamPredictor

    image = np.random.default_rng(0).integers(0, 255, (768, 1024, 3), dtype=np.uint8)
    row: dict[str, Any] = {"model": "vit_b", "rung": "amg", "device": device}
    gpu = device.startswith("cuda")
    fast = ("sdpa_bf16_s", LADDER["sdpa"]) if gpu else ("sdpa_fp32_s", LADDER["sdpa"].replace(dtype="float32"))
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    for name, run in [("ref_fp32_s", lambda: RefAMG(ref).generate(image)),
                      ("fp32_s", lambda: SamAutomaticMaskGenerator(SamPredictor(copy.deepcopy(ours), fast=LADDER["fp32"], device=device)).generate(image)),
                      (fast[0], lambda: SamAutomaticMaskGenerator(SamPredictor(copy.deepcopy(ours), fast=fast[1], device=device)).generate(image))]:
        if gpu:
            run()  # warm-up (kernels, autotuning); the CPU has nothing to warm
        sync()
        t0 = time.perf_counter()
        masks = run()
        sync()
        row[name] = round(time.perf_counter() - t0, 3)
        row[name.replace("_s", "_masks")] = len(masks)
    bench.add(row)


def _row_timeout(signum: int, frame: Any) -> None:
    raise TimeoutError(f"row exceeded {ROW_CAP_S} s or the budget")


def plan(models: list[str], sizes: list[int], rungs: list[str]) -> list[tuple[str, list[tuple[int, str]]]]:
    """Work in priority order, grouped by model: bs 32 up to the fused kernel (vit_b, then vit_h without its fp32
    rows, which need 70+ GB there), then the quantized, sparse and SDPA-compiled bs-32 rungs, then fp32 at bs 8,
    then bs 8 and 1."""
    fast = ["bf16", "sdpa", "triton", "float8"]
    slow = ["compile", "sparse24", "int8"]
    main, quant = fast[:3], [fast[3], *slow]
    order = [("vit_b", [(32, r) for r in ["ref-fp32", "fp32", *main, *EXTRA_RUNGS]]), ("vit_h", [(32, r) for r in main]),
             ("vit_b", [(32, r) for r in quant]), ("vit_h", [(32, r) for r in quant] + [(8, "ref-fp32"), (8, "fp32")]),
             ("vit_b", [(8, r) for r in fast] + [(1, r) for r in ["ref-fp32", "fp32", *fast]]),
             ("vit_h", [(8, r) for r in fast] + [(1, r) for r in ["ref-fp32", *fast]]),
             ("vit_b", [(bs, r) for bs in (8, 1) for r in ENCODER_RUNGS]),
             ("vit_h", [(bs, r) for bs in (32, 8, 1) for r in ENCODER_RUNGS])]
    done: set[tuple[str, int, str]] = set()
    out = []
    for variant, items in order:
        keep = []
        for bs, rung in items:
            key = (variant, bs, rung)
            if variant in models and bs in sizes and rung in rungs and key not in done:
                done.add(key)
                keep.append((bs, rung))
        if keep:
            out.append((variant, keep))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["vit_b", "vit_h"])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[32, 8, 1])
    parser.add_argument("--rungs", nargs="+", default=list(ENCODER_RUNGS))
    parser.add_argument("--budget", type=float, default=420.0, help="seconds for the whole run")
    parser.add_argument("--out", default="sam_bench.json")
    parser.add_argument("--amg-only", action="store_true",
                        help="only the automatic-mask-generator comparison, on CUDA when present, else the CPU")
    args = parser.parse_args()
    if args.amg_only:
        device = "cuda" if torch.cuda.is_available() else "cpu"
        ref, ours = reference_pair("vit_b", device)
        amg_row(Bench(args), ref, ours, device)
        return
    for key in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, key):  # every rung recompiles fresh blocks; never fall back to eager
            setattr(torch._dynamo.config, key, 256)
    bench = Bench(args)
    signal.signal(signal.SIGALRM, _row_timeout)
    groups = plan(args.models, args.batch_sizes, args.rungs)
    vit_b_at = [i for i, (v, _) in enumerate(groups) if v == "vit_b"]
    extras_at = vit_b_at[min(1, len(vit_b_at) - 1)] if vit_b_at else -1  # after vit_b's main bs-32 rows
    for index, (variant, items) in enumerate(groups):
        if bench.left() < 20:
            bench.add({"model": variant, "skipped": f"{len(items)} rows: time budget"})
            continue
        ref, ours = reference_pair(variant)
        images = torch.randn(max(bs for bs, _ in items + [(2, "")]), 3, 1024, 1024, device="cuda")
        with torch.inference_mode():
            base_emb = ours.image_encoder(images[:2])
        for bs, rung in items:
            encoder_row(bench, variant, rung, bs, ref, ours, base_emb, images)
        if index == extras_at:
            for extra, extra_args in ((nested_row, (bench, ours)), (amg_row, (bench, ref, ours))):
                try:
                    if bench.left() > 30:
                        extra(*extra_args)
                except Exception as exc:  # noqa: BLE001 - as for encoder rows
                    bench.add({"model": variant, "rung": extra.__name__, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        del ref, ours, images, base_emb
        torch.cuda.empty_cache()
    print_table(bench.rows)


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"\n{'model':7} {'rung':9} {'bs':>3} {'img/s':>8} {'ms/batch':>9} {'peak GiB':>8} {'emb err':>8} "
          f"{'logit err':>9} {'mask IoU':>8}")
    for r in rows:
        if "batch" not in r:
            continue
        note = r.get("error") or r.get("skipped")
        if note:
            print(f"{r['model']:7} {r['rung']:9} {r['batch']:>3} {note[:70]}")
            continue
        print(f"{r['model']:7} {r['rung']:9} {r['batch']:>3} {r['img_per_s']:>8} {r['ms_per_batch']:>9} "
              f"{r['peak_gib']:>8} {r.get('embed_rel_err', float('nan')):>8.1e} "
              f"{r.get('logits_rel_err', float('nan')):>9.1e} {r.get('mask_iou', float('nan')):>8.4f}")


if __name__ == "__main__":
    main()
