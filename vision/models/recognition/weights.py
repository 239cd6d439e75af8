"""Weight records of the shipped recognition models (files under ``vision/models/weights``).

Each record's ``meta`` is the model card in data form (``docs/models/recognition.md`` has the prose):
parameter count, file size, training recipe, data and the scores measured with ``vision eval recognition``;
``tests/models/test_recognition_weights.py`` rebuilds each model and checks these facts against the file.
``None`` means no weights ship.
"""

from __future__ import annotations

from vision.models._registry import Weights

__all__ = ["CRNN_MOBILENET_SMALL", "CRNN_TRANSFORMER_SMALL"]

_SYNTH = ("on-the-fly synthetic word crops (vision.training.synth.words): 322 Debian font files (subset to the "
          "vocabulary), Debian word lists (English + 9 European languages, 50k words each) plus generated "
          "numbers, dates, prices, codes, emails/URLs, punctuation, check boxes; scan/fax/receipt/photo "
          "degradations, neighbour slivers, underlines, table rules; no real images")

CRNN_MOBILENET_SMALL: Weights | None = Weights(
    file="reco_crnn_mobilenet_small.safetensors",
    sha256="390463b3c8c7d0b4e1e5e11a56e306e6a0492b7a81e10ec4c99b4b32fd24bb81",
    meta={
        "num_params": 2313069,
        "file_size": 9327700,
        "dtype": "float32",
        "steps": 23033,
        "samples_seen": 11792896,
        "train_minutes_gpu": 16.6,
        "hardware": "1x NVIDIA H200 (3 calls: 456 s + 452 s + 83 s of training), 15 DataLoader workers",
        "recipe": {
            "arch": "crnn_mobilenet_small",
            "command": "python -m vision.training.recognition --config train.json --max-minutes 9 (twice, "
                       "resuming) then --config finetune.json --resume ... --restart-schedule",
            "stage1": {"batch_size": 512, "width": 192, "lr": 0.002, "weight_decay": 0.01, "warmup_steps": 300,
                       "schedule": "cosine over 15 min of training time", "ema_decay": 0.999, "bf16": True,
                       "optimizer": "AdamW(0.9, 0.99)", "grad_clip": 5.0, "steps": 22058},
            "stage2": {"lr": 0.0003, "schedule": "cosine over 1.4 min", "ema_decay": 0.995, "group_batches": 4,
                       "synth": {"p_sliver": 0.4, "p_neighbours": 0.45, "p_mono": 0.5}, "steps": 975},
            "exported": "EMA weights",
        },
        "data": _SYNTH,
        "metrics": {
            "words_dev": {"word_accuracy": 0.8054, "word_accuracy_cased": 0.7996, "cer": 0.0646,
                          "command": "vision eval recognition --data ../shared/data/words_dev"},
            "synthetic_val": {"word_accuracy": 0.8887, "cer": 0.0415, "n": 1024},
        },
    },
)

CRNN_TRANSFORMER_SMALL: Weights | None = None  # not trained yet: the GPU budget went to the default model
