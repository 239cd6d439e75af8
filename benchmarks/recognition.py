"""Recognition throughput: width-bucketed batching vs naive pad-to-max, plus the opt-in fast paths.

    python benchmarks/recognition.py                       # CPU (2 threads), rendered crops
    python benchmarks/recognition.py --data ../shared/data/words_dev --limit 2000
    python benchmarks/recognition.py --device cuda --limit 20000 --batch-size 1024   # GPU ladder
    python benchmarks/recognition.py --host-profile --limit 4000 --batch-size 1024  # host us/crop, on the CPU
    python benchmarks/recognition.py --arch crnn_transformer_small ...   # another registered recognizer
    python benchmarks/recognition.py --data ../shared/data/words_dev --compare-weights OLD.safetensors --only-default
        # the CPU default (onnxruntime + lexicon) with the shipped weights and with OLD, alternated in one run

Every row times the whole predictor call, from a list of variable-size numpy crops to texts (resize,
bucketing, padding, model, CTC decoding) after a warm-up call (which also compiles), with
``torch.cuda.synchronize()`` before each clock read on GPU. The baseline is measured in the same run: the
same predictor with every crop padded to the maximum width (one 192 px bucket).
Prints a table and writes JSON to ``benchmarks/results/recognition_<device>.json``.

``--host-profile`` prices the predictor's host side before GPU time is spent: the model is replaced by a
replay of its own recorded logits (free), the call runs on the CPU in one thread (``workers=1``), and the
time spent in the predictor's device methods (what a GPU runs as queued kernels) is subtracted from the
wall time. Both resize paths are priced (``resize="host"``: cv2 per crop on the host; ``"device"``: the host
packs raw bytes, the resize is device time), then timed end to end on the CPU with the real model
(onnxruntime when installed; greedy decoding, and the CPU default with lexicon "en"). The GPU ladder (eager rungs without CUDA
graphs, then the compiled rungs, then the CUDA default: bf16 replayed from CUDA graphs, resized on the
device) also times the default's model alone on the same batches, the ceiling for the call.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.fast.quantize import quantize_int8
from vision.models import get_model
from vision.predictors.recognition.batching import plan_batches
from vision.predictors.recognition.device_resize import pack_batch, resize_packed
from vision.predictors.recognition.lexicon import load_lexicon
from vision.predictors.recognition.predictor import RecognitionPredictor, recognition_predictor
from vision.predictors.recognition.preprocess import resize_to_height, resized_widths


def rendered_crops(n: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` word crops of form-like sizes (12-30 px high, 1-14 characters) drawn with DejaVu fonts."""
    from PIL import Image, ImageDraw, ImageFont

    rng = np.random.default_rng(seed)
    fonts = sorted(Path("/usr/share/fonts/truetype/dejavu").glob("*.ttf"))
    if not fonts:  # machines without the Debian package: matplotlib bundles the same DejaVu family
        import matplotlib

        fonts = sorted(Path(matplotlib.get_data_path(), "fonts", "ttf").glob("DejaVu*.ttf"))
    loaded: dict[tuple[int, int], ImageFont.FreeTypeFont] = {}  # (font, size) -> font: loading dominates
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.,:-/$%()"
    crops = []
    for _ in range(n):
        text = "".join(rng.choice(list(alphabet), int(rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 10, 14]))))
        key = (int(rng.integers(len(fonts))), int(rng.integers(12, 30)))
        font = loaded.get(key) or loaded.setdefault(key, ImageFont.truetype(str(fonts[key[0]]), key[1]))
        x0, y0, x1, y1 = font.getbbox(text)
        img = Image.new("RGB", (x1 - x0 + 4, y1 - y0 + 4), (245, 245, 240))
        ImageDraw.Draw(img).text((2 - x0, 2 - y0), text, font=font, fill=(20, 20, 20))
        crops.append(np.asarray(img))
    return crops


def padding_fraction(crops: list[np.ndarray], bucket: int, max_width: int = 192, batch_size: int | None = None
                     ) -> float:
    """Share of padded positions in the model inputs when crops (cut in chunks past ``max_width``) are padded
    to ``bucket`` multiples, and every batch to ``batch_size`` rows when given (compiled, static shapes)."""
    sizes = np.array([c.shape[:2] for c in crops])
    plan = plan_batches(resized_widths(sizes), max_width=max_width, overlap=64, bucket=bucket,
                        batch_size=batch_size or len(crops))
    used = int(plan.width.sum())
    return 1.0 - used / sum(w * (batch_size or len(idx)) for w, idx in plan.batches)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_predictor(predictor: RecognitionPredictor, crops: list[np.ndarray], repeat: int) -> tuple[float, list[str]]:
    """Best-of-``repeat`` crops/s of one predictor call over all crops, and its readings."""
    texts = [t for t, _ in predictor(crops)]  # warm-up (and compilation) excluded from timing
    best = float("inf")
    for _ in range(repeat):
        sync(predictor.device)
        t0 = time.perf_counter()
        predictor(crops)
        sync(predictor.device)
        best = min(best, time.perf_counter() - t0)
    return len(crops) / best, texts


class _Replay:
    """Stands in for a model: records the wrapped model's outputs on the first call, then replays them (the
    predictor's batches come in the same order every call), so that only host work is left to time."""

    def __init__(self, model: object) -> None:
        self.model, self.outputs, self.position = model, [], None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.position is None:
            self.outputs.append(torch.as_tensor(self.model(x)))
            return self.outputs[-1]
        out = self.outputs[self.position]
        assert out.shape[:2] == (x.shape[0], x.shape[-1] // 4), "the replayed batches changed"
        self.position += 1
        return out


def resize_step_us(crops: list[np.ndarray], batch_size: int) -> dict[str, float]:
    """Microseconds per crop of the resize step alone, on the CPU: ``cv2`` per crop (host path), and
    :func:`pack_batch` (host) + :func:`resize_packed` (device) over the predictor's batches (device path)."""
    t0 = time.perf_counter()
    for c in crops:
        resize_to_height(c)
    cv2_us = (time.perf_counter() - t0) / len(crops) * 1e6
    sizes = np.array([c.shape[:2] for c in crops])
    resized = resized_widths(sizes)
    plan = plan_batches(resized, max_width=192, overlap=64, bucket=32, batch_size=batch_size)
    pack = roi = 0.0
    for width, pieces in plan.batches:
        t0 = time.perf_counter()
        packed = pack_batch(crops, sizes, resized, plan, pieces, width)
        t1 = time.perf_counter()
        resize_packed(packed.flat, torch.from_numpy(packed.meta), packed.groups, height=32, out_width=width)
        pack, roi = pack + t1 - t0, roi + time.perf_counter() - t1
    return {"host": cv2_us, "pack": pack / len(crops) * 1e6, "device": roi / len(crops) * 1e6}


def host_profile(crops: list[np.ndarray], batch_size: int, repeat: int) -> list[dict]:
    """Host microseconds per crop of the predictor, both resize paths, on the CPU (see the module docstring).

    ``device`` is the time spent in the predictor's device methods (``_forward``: device resize, padding,
    normalisation, model, CTC decoding; ``_decode_stitched``; ``_log_probs``), which a GPU runs as queued
    kernels; ``host`` is the rest of the call's wall time, in one thread. ``resize`` is the resize step
    alone (:func:`resize_step_us`): on the host path ``cv2.resize``, which releases the GIL and spreads
    over the pool's threads, so ``host - resize`` approximates the GIL-holding Python per crop; on the
    device path the resize is part of ``device`` (roi_align on the CPU here). Both paths replay the same
    recorded logits (their batches are the same). ``e2e`` rows time real predictors end to end (greedy, and
    the CPU default: onnxruntime when installed, lexicon "en").
    """
    rows = []
    step = resize_step_us(crops, batch_size)
    for name, kw in [("greedy decoding", {"lexicon": None}), ("lexicon 'en' (default)", {})]:
        p = recognition_predictor(device="cpu", batch_size=batch_size, workers=1, onnx=False, **kw)
        replay = _Replay(p.model)
        p.model = replay
        reference = p(crops)
        spent = [0.0]
        for method in ("_forward", "_decode_stitched", "_log_probs"):
            setattr(p, method, _timed(getattr(p, method), spent))
        for resize in ("host", "device"):
            p.resize = resize
            best = (float("inf"), 0.0)
            for _ in range(repeat):
                replay.position, spent[0] = 0, 0.0
                t0 = time.perf_counter()
                out = p(crops)
                wall = time.perf_counter() - t0
                assert out == reference
                best = min(best, (wall - spent[0], spent[0]))
            host, device = (v / len(crops) * 1e6 for v in best)
            rows.append({"resize": resize, "decoding": name, "host_us": host, "device_us": device,
                         "resize_us": step[resize]})
    for name, kw in [("greedy", {"lexicon": None}), ("CPU default", {})]:
        reference = None
        for resize in ("host", "device"):
            predictor = recognition_predictor(device="cpu", batch_size=batch_size, resize=resize, **kw)
            rate, texts = time_predictor(predictor, crops, repeat)
            reference = reference or texts
            same = sum(a == b for a, b in zip(texts, reference)) / len(crops)
            rows.append({"resize": resize, "decoding": f"e2e {name}", "crops_per_s": rate, "same_text": same})
    print(f"recognition host profile, {len(crops)} crops, batch {batch_size}, 1 thread, "
          f"{platform.processor() or platform.machine()}")
    print(f"{'resize':<8}{'decoding':<26}{'device (CPU)':>14}{'host':>8}{'resize step':>13}"
          f"{'host - resize':>15}  (us/crop)")
    for r in rows[:4]:
        rest = f"{r['host_us'] - r['resize_us']:>15.1f}" if r["resize"] == "host" else f"{'(device)':>15}"
        print(f"{r['resize']:<8}{r['decoding']:<26}{r['device_us']:>14.1f}{r['host_us']:>8.1f}"
              f"{r['resize_us']:>13.1f}{rest}")
    print(f"device path: packing {step['pack']:.1f} us/crop (host, part of 'host'), roi_align resize "
          f"{step['device']:.1f} us/crop (device, part of 'device')")
    print(f"end to end on the CPU ({torch.get_num_threads()} threads, onnxruntime when installed; greedy, or the "
          "CPU default with lexicon 'en'):")
    for r in rows[4:]:
        print(f"  {r['decoding']:<16} resize={r['resize']:<8}{r['crops_per_s']:>8.0f} crops/s  "
              f"same text as host: {r['same_text']:.1%}")
    return rows


def _timed(fn: object, spent: list[float]) -> object:
    """``fn``, adding the seconds each call takes to ``spent[0]``."""
    def call(*args: object) -> object:
        t0 = time.perf_counter()
        try:
            return fn(*args)  # type: ignore[operator]
        finally:
            spent[0] += time.perf_counter() - t0
    return call


def model_only_rate(predictor: RecognitionPredictor, crops: list[np.ndarray], repeat: int) -> float:
    """Crops/s of ``predictor.model`` alone, run back to back on the device-resident inputs of one predictor
    call: the ceiling that the host side of the call is measured against."""
    model, inputs = predictor.model, []

    def record(x: torch.Tensor) -> torch.Tensor:
        inputs.append(x.clone())
        return model(x)

    predictor.model = record
    try:
        predictor(crops)
    finally:
        predictor.model = model
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeat):
            sync(predictor.device)
            t0 = time.perf_counter()
            for x in inputs:
                model(x)
            sync(predictor.device)
            best = min(best, time.perf_counter() - t0)
    return len(crops) / best


def sync_points(predictor: RecognitionPredictor, crops: list[np.ndarray]) -> dict[str, int]:
    """Where one call makes the host wait for the GPU (``torch.cuda.set_sync_debug_mode``): ``file:line`` ->
    count. By design only the end of the call (stitched long crops) and lexicon look-ups should appear; the
    per-batch event waits are explicit and not reported."""
    import warnings

    counts: dict[str, int] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            predictor(crops)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    for w in caught:
        key = f"{Path(w.filename).name}:{w.lineno}"
        counts[key] = counts.get(key, 0) + 1
    return counts


class _Rows(list):
    """The table's rows, each printed as soon as it is measured (a run cut short still reports)."""

    def append(self, row: tuple) -> None:
        super().append(row)
        print(f"measured {row[0]}: {row[1]:.0f} crops/s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--arch", default=None, help="registered recognition model (default: the default one)")
    parser.add_argument("--data", default=None, help="a crop set (e.g. ../shared/data/words_dev); default: rendered")
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=None)
    parser.add_argument("--host-profile", action="store_true", help="host us/crop on the CPU (see above)")
    parser.add_argument("--compare-weights", default=None,
                        help="CPU: also time the CPU default with these weights, alternating with the shipped ones")
    parser.add_argument("--only-default", action="store_true", help="CPU: skip the ladder, time the default only")
    parser.add_argument("--skip-compile", action="store_true", help="GPU: leave out the torch.compile rungs")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if args.data:
        from vision.evaluation.recognition import load_crop_set

        crops = load_crop_set(args.data, args.limit)[0]
    else:
        crops = rendered_crops(args.limit)
    if args.host_profile:
        rows = host_profile(crops, args.batch_size, args.repeat)
        out = Path(args.out or Path(__file__).parent / "results" / "recognition_host.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"crops": len(crops), "batch_size": args.batch_size, "rows": rows}, indent=1))
        return 0

    def make(**kw: object) -> RecognitionPredictor:  # eager PyTorch, greedy, each crop read once unless told
        kw = {"onnx": False, "lexicon": None, "resize": "host", "slanted": False, "cuda_graphs": False, **kw}
        return recognition_predictor(args.arch, device=device, batch_size=args.batch_size, rotate_tall=False,
                                     **kw)

    rows = _Rows()
    if args.only_default or args.compare_weights:
        return compare_default(args, crops, make, rows) if device.type == "cpu" else 2
    baseline = make(bucket=192)
    arch = baseline.arch
    naive_rate, ref = time_predictor(baseline, crops, args.repeat)
    rows.append(("fp32 eager, pad to max width (baseline)", naive_rate, padding_fraction(crops, 192), 1.0))
    rate, texts = time_predictor(make(), crops, args.repeat)
    agree = lambda t: sum(a == b for a, b in zip(t, ref)) / len(ref)
    rows.append(("fp32 eager, 32 px width buckets", rate, padding_fraction(crops, 32), agree(texts)))
    if device.type == "cpu":
        model = quantize_int8(get_model(arch), device="cpu")
        p = RecognitionPredictor(model, arch=arch, device=device, dtype=torch.float32,
                                 batch_size=args.batch_size, rotate_tall=False)
        rate, texts = time_predictor(p, crops, args.repeat)
        rows.append(("int8 dynamic, buckets", rate, padding_fraction(crops, 32), agree(texts)))
        rate, texts = time_predictor(make(onnx=True), crops, args.repeat)
        rows.append(("onnxruntime fp32, buckets", rate, padding_fraction(crops, 32), agree(texts)))
        rate, texts = time_predictor(make(onnx=True, lexicon="en"), crops, args.repeat)
        rows.append(("onnxruntime + lexicon", rate, padding_fraction(crops, 32), agree(texts)))
        rate, texts = time_predictor(make(onnx=True, lexicon="en", slanted=True), crops, args.repeat)
        rows.append(("+ slanted words read again (the CPU default)", rate, padding_fraction(crops, 32),
                     agree(texts)))
    else:
        bf16 = torch.bfloat16
        rate, texts = time_predictor(make(dtype=bf16), crops, args.repeat)
        rows.append(("bf16 eager, buckets", rate, padding_fraction(crops, 32), agree(texts)))
        pad = padding_fraction(crops, 32, batch_size=args.batch_size)
        if not args.skip_compile:
            naive = make(dtype=bf16, compile=True, bucket=192)
            rate, texts = time_predictor(naive, crops, args.repeat)
            rows.append(("bf16 + compile, pad to max width", rate,
                         padding_fraction(crops, 192, batch_size=args.batch_size), agree(texts)))
            fast = make(dtype=bf16, compile=True)
            rate, texts = time_predictor(fast, crops, args.repeat)
            rows.append(("bf16 + compile, buckets (padded batches)", rate, pad, agree(texts)))
            on_device = RecognitionPredictor(fast.model, arch=fast.arch, device=device, dtype=bf16,
                                             pad_batches=True, batch_size=args.batch_size, rotate_tall=False,
                                             resize="device")
            rate, texts = time_predictor(on_device, crops, args.repeat)
            rows.append(("bf16 + compile, buckets, resized on the device", rate, pad, agree(texts)))
        graphs = make(dtype=bf16, cuda_graphs=None, resize="device")  # the CUDA default, greedy
        rate, texts = time_predictor(graphs, crops, args.repeat)
        rows.append(("bf16, CUDA graphs, buckets, resized on the device", rate, pad, agree(texts)))
        lexicon = make(dtype=bf16, cuda_graphs=None, resize="device", lexicon="en")
        rate, texts = time_predictor(lexicon, crops, args.repeat)
        rows.append(("the same, lexicon 'en'", rate, pad, agree(texts)))
        rows.append(("  model alone on those batches (no host work)", model_only_rate(graphs, crops, args.repeat),
                     pad, float("nan")))
        print("host waits for the GPU in one call (file:line -> count):", sync_points(lexicon, crops))
    print(f"recognition ({arch}), {len(crops)} crops, device {device} ({torch.get_num_threads()} threads), "
          f"batch {args.batch_size}, {platform.processor() or platform.machine()}")
    print(f"{'rung':<48}{'crops/s':>10}{'x base':>8}{'padding':>9}{'same text':>11}")
    for name, rate, pad, same in rows:
        print(f"{name:<48}{rate:>10.0f}{rate / naive_rate:>8.2f}{pad:>9.1%}{same:>11.1%}")
    suffix = "" if args.arch is None else f"_{args.arch}"
    out = Path(args.out or Path(__file__).parent / "results" / f"recognition_{device.type}{suffix}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"arch": arch, "device": str(device), "threads": torch.get_num_threads(),
                               "crops": len(crops), "data": args.data or "rendered", "batch_size": args.batch_size,
                               "rows": [{"rung": n, "crops_per_s": r, "speedup": r / naive_rate, "padding": p,
                                         "same_text": s} for n, r, p, s in rows]}, indent=1))
    return 0


def compare_default(args: argparse.Namespace, crops: list[np.ndarray], make, rows: _Rows) -> int:
    """The CPU default (onnxruntime + lexicon "en", slanted words read again) with the shipped weights, the
    same reading each crop once (``slanted=False``) and, with ``--compare-weights``, another weights file:
    alternating round by round on the same crops (so load swings hit all alike); best round of each."""
    shipped = make(onnx=True, lexicon="en", slanted=True)
    once = make(onnx=True, lexicon="en")
    other = make(onnx=True, lexicon="en", slanted=True, weights=args.compare_weights) if args.compare_weights else None
    best = {"shipped": 0.0, "once": 0.0, "other": 0.0}
    for _ in range(args.repeat):
        for key, p in (("shipped", shipped), ("once", once), ("other", other)):
            if p is not None:
                best[key] = max(best[key], time_predictor(p, crops, 1)[0])
    rows.append(("CPU default (onnxruntime + lexicon, slanted words read again), shipped weights", best["shipped"],
                 float("nan"), 1.0))
    rows.append(("the same, each crop read once (slanted=False)", best["once"], float("nan"), 1.0))
    if other is not None:
        rows.append((f"CPU default, {Path(args.compare_weights).name}", best["other"], float("nan"), 1.0))
    out = Path(args.out or Path(__file__).parent / "results" / "recognition_cpu_default_compare.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"arch": shipped.arch, "threads": torch.get_num_threads(), "crops": len(crops),
                               "data": args.data or "rendered", "batch_size": args.batch_size, "repeat": args.repeat,
                               "rows": [{"rung": n, "crops_per_s": r} for n, r, _, _ in rows]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
