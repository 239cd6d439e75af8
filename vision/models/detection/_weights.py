"""Weight records of the shipped detection models (file under vision/models/weights, sha256, model-card meta).

Model card: docs/models/detection.md. ``tests/models/test_detection_weights.py`` rebuilds each model and
checks this meta (parameter count, checksum, size, post-processing keys) against the file.
"""

from __future__ import annotations

from vision.models._registry import Weights

__all__ = ["DEFAULT_WEIGHTS"]

_RECIPE = {
    "config": "configs/detection/db_mobilenet_v3_large.json",
    "command": "python -m vision.training.detection --config configs/detection/db_mobilenet_v3_large.json "
    "--out OUT",
    "hardware": "1x NVIDIA H200, 16 CPU cores (15 data workers), one 7.5-minute call",
    "steps": 5269,
    "samples": 168608,
    "train_seconds": 374.8,
    "optimizer": "AdamW, cosine over training time with warm-up, bf16 autocast, eager (data-bound: 22% "
    "data wait at 450 crops/s)",
}

_DATA = (
    "660 pages of born-digital PDFs from Debian's texlive-publishers-doc, texlive-latex-base-doc and "
    "texlive-science-doc (one page per file, word boxes from pypdfium2 text layers, pages whose text layer "
    "disagrees with the rendered ink dropped; 40 more pages held out for validation), and synthetic pages "
    "drawn with Pillow in 175 Debian fonts (articles, letters, forms, receipts, tables, invoices, slides); "
    "degraded as scans, faxes, receipts and phone photos. No evaluation-set data."
)

DEFAULT_WEIGHTS: dict[str, Weights] = {
    "db_mobilenet_v3_large": Weights(
        file="det_db_mobilenet_v3_large.safetensors",
        sha256="e0b822a07287fc9b0dc4c6f2806429acea48b98f6ed91ae61ddf4b0d2bc619d1",
        meta={
            "num_params": 2_978_290,
            "file_bytes": 12_038_840,
            "recipe": _RECIPE,
            "data": _DATA,
            "input_shapes": [[1024, 1024], [1024, 768], [768, 1024], [1024, 512], [512, 1024]],
            # Calibrated on the 40 held-out PDF pages with labels padded by 2 px (the evaluation README's
            # "padded a few pixels around ink" convention), by vision.training.detection_eval.calibrate.
            "postprocess": {"bin_thresh": 0.3, "box_thresh": 0.5, "unclip_ratio": 0.4, "pad": 2.0},
            "metrics": {
                # 40 held-out PDF pages, shipped post-processing; labels as trained / padded by 2 px
                "validation_f1_iou50": {"labels": 0.786, "labels_padded_2px": 0.8778},
                "funsd_dev": {"precision": 0.848, "recall": 0.7786, "f1": 0.8118, "f1_iou30": 0.8913},
                "sroie_dev": {"precision": 0.8966, "recall": 0.8271, "f1": 0.8605, "f1_iou30": 0.9159},
            },
        },
    ),
}
