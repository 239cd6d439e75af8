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
_SYNTH_MIX = ("stage 6 (session 15): a mix of five generators (vision.training.synth.mix): document words 35%, "
              "multilingual words 15% (80% of dictionary words from 17 non-English lists: Debian wngerman, "
              "wfrench, wspanish, witalian, wportuguese, wdutch, wpolish, wdanish, wswedish, wnorwegian, GPL-2 "
              "and compatible; hunspell-cs/-sk/-hu/-ro/-sl/-hr expanded with unmunch, GPL/LGPL/MPL), scene text "
              "on photographs 30%, screen/video overlays 10%, receipts 10%; 247 font files from 37 Debian font "
              "packages (OFL, GPL with font exception, Apache-2.0, Bitstream Vera/DejaVu, URW AFPL/GPL, "
              "LPPL); 62 photographs from Debian wallpaper packages (gnome-backgrounds CC-BY-SA-3.0, "
              "plasma-workspace-wallpapers GPL-2+, mate-backgrounds GPL-2+, ukui-wallpapers CC-BY-SA-3.0), "
              "downscaled to 640 px, 8 more held out as text-free negatives; no real text images")

CRNN_MOBILENET_SMALL: Weights | None = Weights(
    file="reco_crnn_mobilenet_small.safetensors",
    sha256="3ac75d971b0973b4aca01f08a03bafeaeeea5e8952ceab4825593efc558516de",
    meta={
        "num_params": 2809525,
        "file_size": 5675946,
        "dtype": "float16 storage (trained and run in float32; load_weights upcasts)",
        "steps": 139789,
        "samples_seen": 75194880,
        "train_minutes_gpu": 114.5,
        "hardware": "stages 1-5: 1x NVIDIA H200 (9 calls of about 8-9 min of training each), 15 DataLoader "
                    "workers; stage 6: 2 NVIDIA H200 of a 4-GPU host with DDP (torchrun, 2 processes, 15 "
                    "workers each; 3 calls, 21.0 min of training, 42.1 GPU-minutes)",
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
            "stage_6": {"change": "scene, screen/overlay, receipt and multilingual text: a fine-tune of every "
                                  "weight (backbone included) of stage 5 on the generator mix of "
                                  "configs/recognition_crnn_mobilenet_small_scene.json",
                        "command": "torchrun --nproc_per_node=2 -m vision.training.recognition --config "
                                   "configs/recognition_crnn_mobilenet_small_scene.json --init <stage-5 weights> "
                                   "--max-minutes 8.7 --bench-data 6, then the same with --resume <checkpoint> "
                                   "(one more call), then --config "
                                   "configs/recognition_crnn_mobilenet_small_scene2.json --resume <checkpoint> "
                                   "--restart-schedule --max-minutes 7.6",
                        "a": {"lr": 0.0007, "warmup_steps": 300, "schedule": "cosine over 16 min of training time",
                              "steps": 4526, "samples": 4634624, "train_seconds": 874.0, "seed": 40},
                        "b": {"lr": 0.0003, "warmup_steps": 150, "schedule": "cosine over 6.8 min",
                              "steps": 2550, "samples": 2611200, "train_seconds": 387.7, "seed": 42},
                        "batch": "512 per GPU, 2 GPUs (global 1024)",
                        "throughput": "generator-bound: about 2.7-3.2k samples/s per GPU (5.3-6.7k in all) at the "
                                      "end of each call, 15 workers per GPU"},
            "exported": "EMA weights, stored as float16 (stage 3's float32 file read 87.77% / 87.09% / CER 4.09% "
                        "with the lexicon, its float16 copy 87.83% / 87.14% / 4.09%)",
        },
        "data": _SYNTH + "; " + _SYNTH_MIX,
        "metrics": {
            "words_dev": {"word_accuracy": 0.8709, "word_accuracy_cased": 0.8638, "cer": 0.0402,
                          "decoding": "greedy (lexicon=None)",
                          "command": "vision eval recognition --data ../shared/data/words_dev --lexicon none"},
            "words_dev_lexicon_en": {"word_accuracy": 0.8821, "word_accuracy_cased": 0.8750, "cer": 0.0375,
                                     "decoding": "greedy + English lexicon (the predictor's default)",
                                     "command": "vision eval recognition --data ../shared/data/words_dev"},
            "funsd_dev_words_lexicon_en": {
                "word_accuracy": 0.8815, "word_accuracy_cased": 0.8751, "cer": 0.0367, "n": 21888,
                "decoding": "greedy + English lexicon",
                "command": "vision eval recognition --data ../shared/data/funsd_dev"},
            "ic15_words_dev_lexicon_en": {
                "word_accuracy": 0.6000, "word_accuracy_cased": 0.5859, "cer": 0.2608, "n": 1065,
                "decoding": "greedy + English lexicon",
                "command": "vision eval recognition --data ../shared/data/ic15_words_dev"},
            "ic15_words_dev": {"word_accuracy": 0.5634, "word_accuracy_cased": 0.5521, "cer": 0.2691, "n": 1065,
                               "decoding": "greedy (lexicon=None)"},
            "ml_dev_ocr": {"page_cer": 0.0835, "page_cer_case_insensitive": 0.0804, "pages": 69,
                           "lang": "default (English lexicon)", "detector": "default",
                           "command": "vision eval ocr --data ../shared/data/ml_dev --device cpu"},
            "ml_dev_ocr_lang": {"page_cer": 0.0817, "page_cer_case_insensitive": 0.0786, "pages": 69,
                                "lang": "each page's own (de 36, fr 7, it 13, sk 13)",
                                "command": "python benchmarks/ml_dev_lang.py --data ../shared/data/ml_dev"},
            "synthetic_val": {"word_accuracy": 0.7510, "word_accuracy_cased": 0.7471, "cer": 0.1157, "n": 2048,
                              "note": "stage 6's validation set: the five-generator mix (seed 42)"},
            "stage_5_for_comparison": {"words_dev_lexicon_en": 0.8813, "funsd_dev_words_lexicon_en": 0.8782,
                                       "ic15_words_dev_lexicon_en": 0.2798, "ml_dev_page_cer": 0.0916},
        },
    },
)

CRNN_TRANSFORMER_SMALL: Weights | None = Weights(
    file="reco_crnn_transformer_small.safetensors",
    sha256="1bd9e512e81653b97fcf35fefc0e855ac4e7dd854a649bd1c3b13e001053e525",
    meta={
        "num_params": 4801397,
        "file_size": 9662826,
        "dtype": "float16 storage (trained and run in float32; load_weights upcasts)",
        "steps": 118832,
        "samples_seen": 60838400,
        "train_minutes_gpu": 111.0,
        "hardware": "stage 1: 1x NVIDIA H100, stage 2: 1x NVIDIA H200, stage 3: 1x NVIDIA H100 (2 calls of "
                    "about 9 min of training each per stage, resuming), 15 DataLoader workers; stage 4's two "
                    "fine-tunes: 1x NVIDIA H200 (3 calls; 2 calls with a second run sharing the GPU); stage 5's four "
                    "fine-tunes: 1x NVIDIA H200, two runs sharing the GPU (3 calls, 7 workers each)",
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
            "stage_5": {
                "change": "the generator draws one- and two-character texts alone (p_short 0.08: signs such "
                          "as $ - * %, single letters and digits, units and abbreviations such as mm, No, "
                          "short numbers with their sign such as 5%, $5, (3)), where stage 4 read worse than "
                          "the CRNN; four fine-tunes of stage 4, averaged (uniform soup)",
                "ingredients": {
                    "short": "configs/recognition_crnn_transformer_small_short.json: --init stage 4, lr 2e-4, "
                             "300-step warm-up, cosine over 17.5 min, seed 27; two calls (the second resumed "
                             "the full checkpoint on the warm machine), 8,380 steps, 4.3M samples, 15.9 min",
                    "shortfax": "configs/recognition_crnn_transformer_small_shortfax.json: the same with the "
                                "fax-weighted profiles of stage 4's fax ingredient, seed 28, beside short: "
                                "8,560 steps, 4.4M samples, 16.0 min",
                    "short2": "short's config with seed 29 and a cosine over 8.6 min, one call: 4,677 steps, "
                              "2.4M samples, 8.3 min",
                    "shortfax2": "shortfax's config with seed 30 and a cosine over 8.6 min, one call, beside "
                                 "short2: 4,649 steps, 2.4M samples, 8.3 min",
                },
                "command": "python -m vision.training.soup reco_crnn_transformer_small.safetensors "
                           "short.safetensors shortfax.safetensors short2.safetensors shortfax2.safetensors "
                           "--dtype float16",
                "fonts": "the session-13 carry (238 files of 37 Debian font packages)",
            },
            "exported": "EMA weights of each ingredient, stored as float16; the soup stored as float16",
        },
        "data": _SYNTH,
        "metrics": {
            "words_dev": {"word_accuracy": 0.8712, "word_accuracy_cased": 0.8651, "cer": 0.0404,
                          "decoding": "greedy (lexicon=None)",
                          "command": "vision eval recognition --data ../shared/data/words_dev --arch "
                                     "crnn_transformer_small --lexicon none"},
            "words_dev_lexicon_en": {"word_accuracy": 0.8827, "word_accuracy_cased": 0.8766, "cer": 0.0378,
                                     "decoding": "greedy + English lexicon (the predictor's default)",
                                     "command": "vision eval recognition --data ../shared/data/words_dev --arch "
                                                "crnn_transformer_small"},
            "funsd_dev_words_lexicon_en": {
                "word_accuracy": 0.8849, "word_accuracy_cased": 0.8788, "cer": 0.0376, "n": 21888,
                "decoding": "greedy + English lexicon",
                "command": "vision eval recognition --data ../shared/data/funsd_dev --arch "
                           "crnn_transformer_small"},
            "funsd_dev_words": {"word_accuracy": 0.8755, "word_accuracy_cased": 0.8696, "cer": 0.0396,
                                "n": 21888, "decoding": "greedy (lexicon=None)"},
        },
        "note": "more accurate than the default CRNN (words_dev 88.27% vs 88.13%, CER 3.78% vs 3.98%; the "
                "21,888 funsd_dev crops 88.49% vs 87.82%, CER 3.76% vs 3.97%, McNemar z = 4.8: 535 crops read "
                "right only by this model, 390 only by the CRNN) and slower on the CPU; stage 5 added 0.8 "
                "points on words_dev over stage 4 (87.50%) and 1.1 on the funsd_dev crops (87.39%)",
    },
)
