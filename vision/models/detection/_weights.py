"""Weight records of the shipped detection models (file under vision/models/weights, sha256, model-card meta).

Model card: docs/models/detection.md. ``tests/models/test_detection_weights.py`` rebuilds each model and
checks this meta (parameter count, checksum, size, post-processing keys) against the file.
"""

from __future__ import annotations

from vision.models._registry import Weights

__all__ = ["DEFAULT_WEIGHTS"]

_RECIPE = {
    # stage 1 (document pages, from scratch)
    "config": "configs/detection/db_mobilenet_v3_large.json",
    "command": "python -m vision.training.detection --config configs/detection/db_mobilenet_v3_large.json "
    "--out OUT",
    "hardware": "1x NVIDIA H200, 16 CPU cores (15 data workers), one 7.5-minute call",
    "steps": 5269,
    "samples": 168608,
    "train_seconds": 374.8,
    "optimizer": "AdamW, cosine over training time with warm-up, bf16 autocast, eager (data-bound: 22% "
    "data wait at 450 crops/s)",
    # stage 2 (fine-tune on document pages + synthetic scene pages; issue 25)
    "finetune_config": "configs/detection/db_mobilenet_v3_large_scene.json",
    "finetune_command": "python -m vision.training.detection --config "
    "configs/detection/db_mobilenet_v3_large_scene.json --init <stage 1> --out OUT (then --resume OUT/resume)",
    "finetune_hardware": "1x NVIDIA H200, 16 CPU cores (15 data workers), three 8.8-minute calls",
    "finetune_steps": 8709,
    "finetune_samples": 278688,
    "finetune_train_seconds": 1373.8,
    # stage 3 (fine-tune on synthetic pages with more receipts, item lines led by lone quantities; issue 25)
    "receipts_config": "configs/detection/db_mobilenet_v3_large_receipts.json",
    "receipts_command": "python -m vision.training.detection --config "
    "configs/detection/db_mobilenet_v3_large_receipts.json --init <stage 2> --out OUT",
    "receipts_hardware": "1x NVIDIA H200 (one GPU of a 4-GPU host, 15 data workers), one 7.8-minute call",
    "receipts_steps": 1844,
    "receipts_samples": 59008,
    "receipts_train_seconds": 426.8,
    # stage 4 (stage 3's data with 30% of receipt prices followed by a dash of their own, "500. —"; issue 24)
    "dashes_config": "configs/detection/db_mobilenet_v3_large_dashes.json",
    "dashes_command": "python -m vision.training.detection --config "
    "configs/detection/db_mobilenet_v3_large_dashes.json --init <stage 3> --out OUT",
    "dashes_hardware": "1x NVIDIA H200, 16 CPU cores (15 data workers), one 7.7-minute call",
    "dashes_steps": 2639,
    "dashes_samples": 84448,
    "dashes_train_seconds": 439.4,
    # stage 5 (stage 4's data with 30% of receipt rules printed as an unlabelled row of one glyph, "*****")
    "separators_config": "configs/detection/db_mobilenet_v3_large_separators.json",
    "separators_command": "python -m vision.training.detection --config "
    "configs/detection/db_mobilenet_v3_large_separators.json --init <stage 4> --out OUT --workers 15",
    "separators_hardware": "1x NVIDIA H200 (one GPU of a 2-GPU host, 32 CPU cores, 15 data workers), one "
    "7.3-minute call",
    "separators_steps": 2124,
    "separators_samples": 67968,
    "separators_train_seconds": 438.4,
}

_DATA = (
    "Stage 1: 660 pages of born-digital PDFs from Debian's texlive-publishers-doc, texlive-latex-base-doc and "
    "texlive-science-doc (one page per file, word boxes from pypdfium2 text layers, pages whose text layer "
    "disagrees with the rendered ink dropped; 40 more pages held out for validation), and synthetic pages "
    "drawn with Pillow in 175 Debian fonts (articles, letters, forms, receipts, tables, invoices, slides); "
    "degraded as scans, faxes, receipts and phone photos. Stage 2: the same kinds of document pages (240 "
    "texlive-publishers-doc pages, 178 fonts) mixed 45/55 with synthetic scene pages: text objects on 62 "
    "Debian wallpaper photographs (gnome-backgrounds, ukui-wallpapers: CC-BY-SA-3.0; mate-backgrounds, "
    "plasma-workspace-wallpapers: GPL-2+; 8 more held out), photographed documents and receipts, video "
    "frames and screens (vision.training.synth.scene_pages). Stage 3: synthetic pages only (no PDF pages) in "
    "the 247 fonts and 18 word lists of the recognition bank, 45% documents (receipts on 37% of them, 30% of "
    "their item lines led by a lone quantity) and 55% scene pages as in stage 2. Stage 4: stage 3's data with "
    "30% of receipt prices followed by a dash standing alone (\"500. \u2014\"). Stage 5: stage 4's data with "
    "30% of receipt rules printed as a row of one repeated glyph (\"*****\", \"-----\"), left unlabelled as "
    "receipt ground truths leave them out. No evaluation-set data."
)

_PHOTO_RECIPE = {
    # the default's stage-2 weights, fine-tuned on synthetic photos only (issue 25)
    "config": "configs/detection/db_mobilenet_v3_large_photo.json",
    "command": "torchrun --nproc_per_node=4 -m vision.training.detection --config "
    "configs/detection/db_mobilenet_v3_large_photo.json --init vision/models/weights/"
    "det_db_mobilenet_v3_large.safetensors --out OUT (then --resume OUT/ckpt)",
    "init": "det_db_mobilenet_v3_large.safetensors (sha256 6cb93e7b...)",
    "hardware": "4x NVIDIA H200 of one host (DDP, 15 data workers per GPU, 64 CPU cores), two 8.4-minute calls",
    "steps": 6050,
    "samples": 774400,
    "train_seconds": 924.4,
    "gpu_minutes": 61.6,
    "optimizer": "AdamW lr 5e-4, cosine over 18 minutes of training with warm-up, bf16 autocast, eager "
    "(858 crops/s on 4 GPUs, 6% data wait)",
}

_PHOTO_DATA = (
    "The default detector's weights (its own sources below), then only synthetic photos: "
    "vision.training.synth.scene_pages (scene 55%, photographed documents and receipts 22%, video frames and "
    "screens 17%, text-free photos 6%) on 62 Debian wallpaper photographs (gnome-backgrounds, "
    "ukui-wallpapers: CC-BY-SA-3.0; mate-backgrounds, plasma-workspace-wallpapers: GPL-2+; 8 more held out), "
    "words from 18 Debian word lists in 247 Debian fonts, documents from 240 texlive-publishers-doc pages. "
    "No evaluation-set data."
)

_INPUT_SHAPES = [[1024, 1024], [1024, 768], [768, 1024], [1024, 512], [512, 1024]]
# Calibrated for the stage-1 weights (kept for stage 2 and the photo fine-tune) on the 40 held-out PDF pages with
# labels padded by 2 px (the evaluation README's "padded a few pixels around ink" convention), by
# vision.training.detection_eval.calibrate.
_POSTPROCESS = {"bin_thresh": 0.3, "box_thresh": 0.5, "unclip_ratio": 0.4, "pad": 2.0}
# The photo detector's: the best of vision.training.detection_eval.calibrate_scenes on 150 synthetic photos,
# kept because it also read more words through the whole OCR on 600 other synthetic photos
# (benchmarks/photo_pages.py: variant default against document_post; docs/models/detection_photo.md).
_PHOTO_POSTPROCESS = {"bin_thresh": 0.3, "box_thresh": 0.5, "unclip_ratio": 0.6, "pad": 0.0}

DEFAULT_WEIGHTS: dict[str, Weights] = {
    "db_mobilenet_v3_large": Weights(
        file="det_db_mobilenet_v3_large.safetensors",
        sha256="d0b0fd4b4f90a237bb8793517d56824bda9bf9b242498bc006e7a32c33b888bc",
        meta={
            "num_params": 2_978_290,
            "file_bytes": 12_038_840,
            "recipe": _RECIPE,
            "data": _DATA,
            "input_shapes": _INPUT_SHAPES,
            "postprocess": _POSTPROCESS,
            "metrics": {
                # 2-core dev CPU, shipped post-processing: vision eval detection (funsd/sroie/ic15, IoU 0.5) and
                # vision eval ocr --photo off (ocr_*: every page read by this detector, the default recognizer;
                # page CERs above 1 would be capped at 1 here); docs/models/detection.md
                # stage 1's 40 held-out PDF pages (the last of the 700 that vision.training.assets --detection renders),
                # labels as trained, unclip_ratio 0.5 (the trainer's validation); stage 2's weights: 0.851,
                # stage 3's: 0.826, stage 4's: 0.8174
                "validation_f1_iou50": {"labels_unclip05": 0.8164},
                "funsd_dev": {"precision": 0.8555, "recall": 0.795, "f1": 0.8241, "f1_iou30": 0.9073},
                "sroie_dev": {"precision": 0.9065, "recall": 0.858, "f1": 0.8815, "f1_iou30": 0.9395},
                "ic15_dev": {"precision": 0.3934, "recall": 0.4366, "f1": 0.4139, "f1_iou30": 0.494},
                "ocr_funsd_dev": {"det_f1": 0.845, "e2e_f1": 0.7639, "page_cer": 0.1056, "page_cer_nospace": 0.0967},
                "ocr_sroie_dev": {"det_f1": 0.8978, "e2e_f1": 0.8288, "page_cer": 0.2512, "page_cer_nospace": 0.284},
                "ocr_ic15_dev": {"det_f1": 0.4102, "e2e_f1": 0.2937, "page_cer": 0.8725, "page_cer_nospace": 0.8349},
                "ocr_wildreceipt_dev": {"det_f1": 0.407, "e2e_f1": 0.279, "page_cer": 0.23,
                                        "page_cer_nospace": 0.155},
            },
        },
    ),
    "db_mobilenet_v3_large_photo": Weights(
        file="det_db_mobilenet_v3_large_photo.safetensors",
        sha256="28c4f82167b93675908e26de58929c24581558b4717962e21d3a31587adc7325",
        meta={
            "num_params": 2_978_290,
            "file_bytes": 6_036_388,  # float16
            "recipe": _PHOTO_RECIPE,
            "data": _PHOTO_DATA,
            "input_shapes": _INPUT_SHAPES,
            "postprocess": _PHOTO_POSTPROCESS,
            "metrics": {
                # 2-core dev CPU, its own post-processing: vision eval detection --arch db_mobilenet_v3_large_photo
                # (every page of the set, IoU 0.5) and vision eval ocr with the defaults (ocr_*: the photo gate routes
                # photos here, read as taken);
                # docs/models/detection_photo.md
                "validation_f1_iou50": {"labels_unclip05": 0.778},
                "ic15_dev": {"precision": 0.4367, "recall": 0.4892, "f1": 0.4615, "f1_iou30": 0.5368},
                "funsd_dev": {"precision": 0.8527, "recall": 0.7932, "f1": 0.8219, "f1_iou30": 0.9046},
                "sroie_dev": {"precision": 0.889, "recall": 0.8414, "f1": 0.8645, "f1_iou30": 0.9246},
                "ocr_ic15_dev": {"det_f1": 0.5373, "e2e_f1": 0.3951, "page_cer": 0.684, "page_cer_nospace": 0.6674},
                "ocr_wildreceipt_dev": {"det_f1": 0.3923, "e2e_f1": 0.2658, "page_cer": 0.2426,
                                        "page_cer_nospace": 0.1657},
            },
        },
    ),
}
