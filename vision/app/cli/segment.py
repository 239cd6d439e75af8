"""``vision segment IMAGE (--point X,Y | --box X0,Y0,X1,Y1 | --auto) --checkpoint PATH -o OUT``.

Writes one PNG per mask (white inside) and ``masks.json`` (score, boxes, area and file of each mask).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.app.cli._common import add_limit_arguments, limits_from_args
from vision.errors import CorruptFile, LimitExceeded, UnsupportedFormat

__all__ = ["register", "run"]


def _floats(count: int):
    def parse(text: str) -> tuple[float, ...]:
        try:
            values = tuple(float(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {count} comma-separated numbers, got {text!r}") from None
        if len(values) != count:
            raise argparse.ArgumentTypeError(f"expected {count} comma-separated numbers, got {text!r}")
        return values

    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "segment", help="segment an image with Segment Anything (SAM)",
        description="Segment an image with Segment Anything: one PNG per mask plus masks.json in the output folder.")
    parser.add_argument("image", type=Path, help="image file (PNG, JPEG, ...)")
    prompt = parser.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--point", type=_floats(2), action="append", metavar="X,Y",
                        help="foreground point in pixels (repeat for a multi-point prompt)")
    prompt.add_argument("--box", type=_floats(4), action="append", metavar="X0,Y0,X1,Y1",
                        help="box in pixels (repeat for several masks)")
    prompt.add_argument("--auto", action="store_true", help="automatic masks over a grid of points")
    parser.add_argument("--checkpoint", required=True, help="SAM checkpoint: official .pth or safetensors, path or URL")
    parser.add_argument("--model-type", default="vit_b", choices=["vit_b", "vit_l", "vit_h", "test"])
    parser.add_argument("-o", "--output", type=Path, required=True, help="output folder")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: cuda when available)")
    parser.add_argument("--fast", default=None, help="speed rung: bf16, sdpa, compile, triton, ... (default fp32)")
    parser.add_argument("--multimask", action="store_true", help="best of 3 ambiguity masks per prompt")
    parser.add_argument("--points-per-side", type=int, default=32, help="grid size for --auto")
    add_limit_arguments(parser)
    parser.set_defaults(func=run)


def _read_rgb(path: Path, args: argparse.Namespace) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    limits = limits_from_args(args)
    if not path.is_file():
        raise UnsupportedFormat(str(path), "no such file")
    if path.stat().st_size > limits.max_bytes:
        raise LimitExceeded(str(path), f"file is larger than {limits.max_bytes} bytes")
    try:
        with Image.open(path) as im:
            if im.width * im.height > limits.max_pixels:
                raise LimitExceeded(str(path), f"{im.width}x{im.height} exceeds {limits.max_pixels} pixels")
            return np.asarray(im.convert("RGB"))
    except UnidentifiedImageError as exc:
        raise UnsupportedFormat(str(path), "not an image format we read") from exc
    except OSError as exc:
        raise CorruptFile(str(path), f"cannot decode image ({exc})") from exc


def run(args: argparse.Namespace) -> int:
    from PIL import Image

    from vision.predictors.segmentation.predictor import sam_predictor
    from vision.pipelines.segment import segment_image

    image = _read_rgb(args.image, args)
    predictor = sam_predictor(args.checkpoint, model_type=args.model_type, device=args.device, fast=args.fast)
    page = segment_image(image, predictor, points=args.point, boxes=args.box, auto=args.auto,
                         multimask=args.multimask, auto_options={"points_per_side": args.points_per_side})
    args.output.mkdir(parents=True, exist_ok=True)
    h, w = image.shape[:2]
    records = []
    for i, region in enumerate(page.regions):
        name = f"mask_{i:03d}.png"
        Image.fromarray(region.mask.astype(np.uint8) * 255).save(args.output / name)
        x0, y0, x1, y1 = region.geometry
        records.append({"file": name, "score": region.score, "box": [x0, y0, x1, y1],
                        "box_pixels": [round(x0 * w), round(y0 * h), round(x1 * w), round(y1 * h)],
                        "area": int(region.mask.sum())})
    meta = {"image": str(args.image), "size": [h, w], "model_type": args.model_type,
            "prompt": {"points": args.point, "boxes": args.box, "auto": args.auto}, "masks": records}
    (args.output / "masks.json").write_text(json.dumps(meta, indent=2))
    print(f"{len(records)} mask(s) written to {args.output}")
    return 0
