"""Recognition throughput: width-bucketed batching vs naive pad-to-max, plus the opt-in fast paths.

    python benchmarks/recognition.py                       # CPU (2 threads), rendered crops
    python benchmarks/recognition.py --data ../shared/data/words_dev --limit 2000
    python benchmarks/recognition.py --device cuda --batch-size 512 --repeat 20   # GPU ladder (bf16, compile)

Every row times the whole predictor call (resize, bucketing, padding, model, CTC decoding) after a
warm-up call, with ``torch.cuda.synchronize()`` before each clock read on GPU. The baseline is measured in
the same run: the same predictor with every crop padded to the maximum width (one 192 px bucket).
Prints a table and writes JSON to ``benchmarks/results/recognition_<device>.json``.
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
from vision.models.recognition.predictor import RecognitionPredictor, recognition_predictor
from vision.models.recognition.preprocess import bucket_width, resize_to_height


def rendered_crops(n: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` word crops of form-like sizes (12-30 px high, 1-14 characters) drawn with DejaVu fonts."""
    from PIL import Image, ImageDraw, ImageFont

    rng = np.random.default_rng(seed)
    fonts = sorted(Path("/usr/share/fonts/truetype/dejavu").glob("*.ttf"))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.,:-/$%()"
    crops = []
    for _ in range(n):
        text = "".join(rng.choice(list(alphabet), int(rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 10, 14]))))
        font = ImageFont.truetype(str(fonts[int(rng.integers(len(fonts)))]), int(rng.integers(12, 30)))
        x0, y0, x1, y1 = font.getbbox(text)
        img = Image.new("RGB", (x1 - x0 + 4, y1 - y0 + 4), (245, 245, 240))
        ImageDraw.Draw(img).text((2 - x0, 2 - y0), text, font=font, fill=(20, 20, 20))
        crops.append(np.asarray(img))
    return crops


def padding_fraction(crops: list[np.ndarray], bucket: int, max_width: int = 192) -> float:
    """Share of padded columns in the model input when crops are padded to ``bucket`` multiples."""
    widths = [min(resize_to_height(c).shape[1], max_width) for c in crops]
    padded = [min(bucket_width(w, bucket), max_width) for w in widths]
    return 1.0 - sum(widths) / sum(padded)


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--data", default=None, help="a crop set (e.g. ../shared/data/words_dev); default: rendered")
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if args.data:
        from vision.evaluation.recognition import load_crop_set

        crops = load_crop_set(args.data, args.limit)[0]
    else:
        crops = rendered_crops(args.limit)

    def make(**kw: object) -> RecognitionPredictor:  # eager PyTorch, greedy decoding unless told otherwise
        kw = {"onnx": False, "lexicon": None, **kw}
        return recognition_predictor(device=device, batch_size=args.batch_size, rotate_tall=False, **kw)

    rows = []
    naive_rate, ref = time_predictor(make(bucket=192), crops, args.repeat)
    rows.append(("fp32 eager, pad to max width (baseline)", naive_rate, padding_fraction(crops, 192), 1.0))
    rate, texts = time_predictor(make(), crops, args.repeat)
    agree = lambda t: sum(a == b for a, b in zip(t, ref)) / len(ref)
    rows.append(("fp32 eager, 32 px width buckets", rate, padding_fraction(crops, 32), agree(texts)))
    if device.type == "cpu":
        model = quantize_int8(get_model("crnn_mobilenet_small"), device="cpu")
        p = RecognitionPredictor(model, arch="crnn_mobilenet_small", device=device, dtype=torch.float32,
                                 batch_size=args.batch_size, rotate_tall=False)
        rate, texts = time_predictor(p, crops, args.repeat)
        rows.append(("int8 dynamic, buckets", rate, padding_fraction(crops, 32), agree(texts)))
        rate, texts = time_predictor(make(onnx=True), crops, args.repeat)
        rows.append(("onnxruntime fp32, buckets", rate, padding_fraction(crops, 32), agree(texts)))
        rate, texts = time_predictor(make(onnx=True, lexicon="en"), crops, args.repeat)
        rows.append(("onnxruntime + lexicon (the CPU default)", rate, padding_fraction(crops, 32), agree(texts)))
    else:
        rate, texts = time_predictor(make(dtype=torch.bfloat16), crops, args.repeat)
        rows.append(("bf16 eager, buckets", rate, padding_fraction(crops, 32), agree(texts)))
        rate, texts = time_predictor(make(dtype=torch.bfloat16, compile=True), crops, args.repeat)
        rows.append(("bf16 + compile, buckets (padded batches)", rate, padding_fraction(crops, 32), agree(texts)))
    print(f"recognition, {len(crops)} crops, device {device} ({torch.get_num_threads()} threads), "
          f"batch {args.batch_size}, {platform.processor() or platform.machine()}")
    print(f"{'rung':<44}{'crops/s':>10}{'x base':>8}{'padding':>9}{'same text':>11}")
    for name, rate, pad, same in rows:
        print(f"{name:<44}{rate:>10.0f}{rate / naive_rate:>8.2f}{pad:>9.1%}{same:>11.1%}")
    out = Path(args.out or Path(__file__).parent / "results" / f"recognition_{device.type}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": str(device), "threads": torch.get_num_threads(), "crops": len(crops),
                               "data": args.data or "rendered", "batch_size": args.batch_size,
                               "rows": [{"rung": n, "crops_per_s": r, "speedup": r / naive_rate, "padding": p,
                                         "same_text": s} for n, r, p, s in rows]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
