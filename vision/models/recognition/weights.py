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
    sha256="ba1d5dd78a5db7c61cbfcb53d28f573c8e57f2add73c96b8f5b1061177eee007",
    meta={
        "num_params": 2809525,
        "file_size": 5675946,
        "dtype": "float16 storage (trained and run in float32; load_weights upcasts)",
        "steps": 132713,
        "samples_seen": 67949056,
        "train_minutes_gpu": 72.4,
        "hardware": "1x NVIDIA H200 (9 calls of about 8-9 min of training each), 15 DataLoader workers",
        "recipe": {
            "arch": "crnn_mobilenet_small",
            "model": {"backbone": {"width_mult": 1.25, "blocks": "rect_late"}},
            "command": "stage 1: python -m vision.training.recognition --config train2.json --max-minutes 9 (three "
                       "calls, each resuming); stage 2: --config configs/recognition_crnn_mobilenet_small_ft.json "
                       "--init <stage-1 weights> --max-minutes 9.3, then the same with --resume (two calls); "
                       "stage 3: --config configs/recognition_crnn_mobilenet_small_ft2.json --init <stage-2 "
                       "weights> --max-minutes 9.2, then --resume (two calls); stages 4 and 5 (backbone frozen): "
                       "--config configs/recognition_crnn_mobilenet_small_ft6.json --init <stage-3 weights> "
                       "--max-minutes 9.05, then --config configs/recognition_crnn_mobilenet_small_ft7.json --init "
                       "<stage-4 weights> --max-minutes 9.05",
            "config": {"batch_size": 512, "width": 192, "group_batches": 4, "lr": 0.002, "weight_decay": 0.01,
                       "warmup_steps": 300, "schedule": "cosine over 25.5 min of training time",
                       "ema_decay": 0.999, "bf16": True, "optimizer": "AdamW(0.9, 0.99)", "grad_clip": 5.0,
                       "synth": {"p_sliver": 0.4, "p_neighbours": 0.45, "p_mono": 0.5}, "seed": 2},
            "fine_tune": {"lr": 0.001, "warmup_steps": 200, "schedule": "cosine over 17.5 min of training time",
                          "steps": 35612, "samples": 18233344, "seed": 3,
                          "synth": {"p_sliver": 0.4, "p_neighbours": 0.45, "p_mono": 0.5, "p_dust": 0.15},
                          "text_mix": "more numbers (0.15), fewer foreign words (0.15 of dictionary words), "
                                      "edge punctuation on 0.35 of words"},
            "stage_3": {"change": "block table 'rect' -> 'rect_late' (stages 1-2 trained 'rect'): the second width "
                                  "halving moved from the first block to the ninth; same weights shapes, so "
                                  "stage 2's weights initialise it",
                        "lr": 0.001, "warmup_steps": 200, "schedule": "cosine over 17 min of training time",
                        "steps": 21895, "samples": 11210240, "train_seconds": 968.8, "seed": 4,
                        "synth": "as stage 2"},
            "stages_4_5": {"change": "the backbone (convolutions and their BatchNorm statistics) frozen; only the "
                                     "projection, BiLSTM and head train, so readings that were right move less; "
                                     "the generator adds name initials ('J.': a capital and a period) as 2% of "
                                     "the texts",
                           "freeze": ["backbone"], "synth": {"p_initials": 0.02},
                           "stage_4": {"lr": 0.0005, "warmup_steps": 200, "schedule": "cosine over 7.9 min",
                                       "steps": 11042, "samples": 5653504, "seed": 14},
                           "stage_5": {"lr": 0.0003, "warmup_steps": 100, "schedule": "cosine over 7.9 min",
                                       "steps": 13268, "samples": 6793216, "seed": 15}},
            "resume_note": "stage 1's second call resumed from the first call's EMA weights with a fresh optimizer "
                           "and a 300-step warm-up (the full optimizer state did not fit the 64 MiB carry); the "
                           "other calls resumed full checkpoints kept on the GPU machine",
            "exported": "EMA weights, stored as float16 (stage 3's float32 file read 87.77% / 87.09% / CER 4.09% "
                        "with the lexicon, its float16 copy 87.83% / 87.14% / 4.09%)",
        },
        "data": _SYNTH,
        "metrics": {
            "words_dev": {"word_accuracy": 0.8709, "word_accuracy_cased": 0.8640, "cer": 0.0423,
                          "decoding": "greedy (lexicon=None)",
                          "command": "vision eval recognition --data ../shared/data/words_dev --lexicon none"},
            "words_dev_lexicon_en": {"word_accuracy": 0.8813, "word_accuracy_cased": 0.8745, "cer": 0.0398,
                                     "decoding": "greedy + English lexicon (the predictor's default)",
                                     "command": "vision eval recognition --data ../shared/data/words_dev"},
            "funsd_dev_words_lexicon_en": {
                "word_accuracy": 0.8782, "word_accuracy_cased": 0.8721, "cer": 0.0397, "n": 21888,
                "decoding": "greedy + English lexicon",
                "command": "vision eval recognition --data ../shared/data/funsd_dev"},
            "synthetic_val": {"word_accuracy": 0.9180, "cer": 0.0327, "n": 2048,
                              "note": "stage 5's validation set (seed 15; stage 3's weights read 0.9180 on "
                                      "stage 3's set, seed 4)"},
        },
    },
)

CRNN_TRANSFORMER_SMALL: Weights | None = Weights(
    file="reco_crnn_transformer_small.safetensors",
    sha256="7c52e586d9cc745f0c027552921933fd415c5e2affb941a49c857801df6f6497",
    meta={
        "num_params": 4801397,
        "file_size": 9662794,
        "dtype": "float16 storage (trained and run in float32; load_weights upcasts)",
        "steps": 92566,
        "samples_seen": 47390208,
        "train_minutes_gpu": 86.8,
        "hardware": "stage 1: 1x NVIDIA H100, stage 2: 1x NVIDIA H200, stage 3: 1x NVIDIA H100 (2 calls of "
                    "about 9 min of training each per stage, resuming), 15 DataLoader workers; stage 4's two "
                    "fine-tunes: 1x NVIDIA H200 (3 calls; 2 calls with a second run sharing the GPU)",
        "recipe": {
            "arch": "crnn_transformer_small",
            "model": {},
            "warm_start": "stage 1: 241 of 296 tensors (the whole backbone) from the shipped crnn_mobilenet_small "
                          "weights; projection, positional conv, the 4 encoder blocks and the head start random. "
                          "Stages 2 and 3: all tensors from the previous stage",
            "command": "stage 1: python -m vision.training.recognition --config "
                       "configs/recognition_crnn_transformer_small_warm.json --init "
                       "vision/models/weights/reco_crnn_mobilenet_small.safetensors --max-minutes 9.05, then the "
                       "same config with --resume <out>/checkpoint --max-minutes 9.3; stages 2 and 3: the "
                       "same two calls with configs/recognition_crnn_transformer_small_ft.json, then "
                       "_ft2.json, and --init <previous stage's weights>",
            "config": {"batch_size": 512, "width": 192, "group_batches": 4, "lr": [0.0007, 0.0005, 0.0004],
                       "weight_decay": 0.01, "warmup_steps": [300, 200, 300],
                       "schedule": "per stage: cosine over 17.5, 17.5 and 17 min of training time (15.3, "
                                   "15.8 and 15.3 run)",
                       "ema_decay": 0.999, "bf16": True, "optimizer": "AdamW(0.9, 0.99)", "grad_clip": 5.0,
                       "synth": {"p_sliver": 0.4, "p_neighbours": 0.45, "p_mono": 0.5,
                                 "p_dust": [0.0, 0.15, 0.15], "p_initials": [0.0, 0.0, 0.02]},
                       "seed": [8, 10, 22]},
            "stage_4": {
                "change": "a uniform soup (vision.training.soup) of three weights in one basin: stage 3 "
                          "and two fine-tunes of it, averaged tensor by tensor (BatchNorm statistics "
                          "included)",
                "ingredients": {
                    "stage_3": "the weights shipped in session 12",
                    "kd": "configs/recognition_crnn_transformer_small_kd.json: stage 3 + frame-level "
                          "distillation from the shipped crnn_mobilenet_small (KL at temperature 2, weight "
                          "1, beside CTC), lr 4e-4 on a 33-min cosine, seed 24; three calls resuming on the "
                          "warm machine, 27,904 steps, 14.3M samples, 24.1 min (stopped at lr 7.4e-5)",
                    "fax": "configs/recognition_crnn_transformer_small_fax.json: stage 3 with the generator "
                           "weighted to faxes and low resolution (profiles clean/scan/fax/receipt/photo "
                           "0.05/0.4/0.35/0.1/0.1, p_low_res 0.8), lr 4e-4 on a 23-min cosine, seed 26; two "
                           "calls, 9,247 steps, 4.7M samples, 16.3 min (stopped at lr 8.5e-5)",
                },
                "command": "python -m vision.training.soup reco_crnn_transformer_small.safetensors "
                           "stage3.safetensors kd.safetensors fax.safetensors --dtype float16",
                "fonts": "the session-13 carry: 238 files of 37 Debian font packages (see "
                         "docs/models/recognition.md)",
            },
            "exported": "EMA weights of each ingredient, stored as float16; the soup stored as float16",
        },
        "data": _SYNTH,
        "metrics": {
            "words_dev": {"word_accuracy": 0.8646, "word_accuracy_cased": 0.8580, "cer": 0.0422,
                          "decoding": "greedy (lexicon=None)",
                          "command": "vision eval recognition --data ../shared/data/words_dev --arch "
                                     "crnn_transformer_small --lexicon none"},
            "words_dev_lexicon_en": {"word_accuracy": 0.8750, "word_accuracy_cased": 0.8684, "cer": 0.0399,
                                     "decoding": "greedy + English lexicon (the predictor's default)",
                                     "command": "vision eval recognition --data ../shared/data/words_dev --arch "
                                                "crnn_transformer_small"},
            "funsd_dev_words_lexicon_en": {
                "word_accuracy": 0.8739, "word_accuracy_cased": 0.8676, "cer": 0.0403, "n": 21888,
                "decoding": "greedy + English lexicon",
                "command": "vision eval recognition --data ../shared/data/funsd_dev --arch "
                           "crnn_transformer_small"},
            "synthetic_val": {"word_accuracy": 0.9258, "cer": 0.0259, "n": 2048,
                              "note": "seed 22's validation set (stage 3 generator) rendered with the "
                                      "session-13 font carry; stage 3 reads 0.9258 / CER 0.0267 on it, the "
                                      "CRNN 0.9180 / 0.0288"},
        },
        "note": "less accurate than the default CRNN (87.5% vs 88.1% on words_dev, 87.4% vs 87.8% on the "
                "21,888 funsd_dev crops) and slower on the CPU; the stage-4 soup added 0.3 points on "
                "words_dev (87.2% -> 87.5%, CER 4.14% -> 3.99%) and 0.2 on the funsd_dev crops (87.2% -> "
                "87.4%)",
    },
)
