"""Weight records of the shipped recognition models (files under ``vision/models/weights``).

Each record's ``meta`` is the model card in data form: parameter count, file size, data, scores measured
with ``vision eval recognition``, and the recipe as the checked-in training configs (``configs/recognition/``)
that produced the weights, stage by stage. ``docs/models/recognition.md`` has the prose;
``tests/models/test_recognition_weights.py`` rebuilds each model and checks these facts against the file and
the configs. ``None`` means no weights ship.
"""

from __future__ import annotations

from vision.models._registry import Weights

__all__ = ["CRNN_MOBILENET_SMALL", "CRNN_TRANSFORMER_SMALL"]

_SYNTH = ("on-the-fly synthetic word crops (vision.training.synth.words): Debian font files subset to the "
          "vocabulary, Debian word lists (English + 9 European languages, 50k words each) plus generated "
          "numbers, dates, prices, codes, emails/URLs, punctuation, check boxes; scan/fax/receipt/photo "
          "degradations, neighbour slivers, underlines, table rules; no real images")
_TRAIN = "python -m vision.training.recognition --config {config} --out OUT --max-minutes 9"
_SOUP = "python -m vision.training.soup OUT.safetensors {ingredients} --dtype float16"
_CRNN = "configs/recognition/crnn_mobilenet_small/"
_S11 = "stage 11 (its EMA weights, float16)"
_S12 = _CRNN + "stage12_soup_"
_TRANSFORMER = "configs/recognition/crnn_transformer_small/"


def _stage(config: str, init: str | None, calls: int, steps: int, gpu: str, gpus: int = 1) -> dict[str, object]:
    """One training run: its config, what it starts from, its GPU calls (each resuming the previous one), its
    steps of 512 samples per GPU and the GPUs it ran on (DDP above one)."""
    return {"config": config, "init": init, "calls": calls, "steps": steps, "samples": steps * 512 * gpus,
            "gpu": gpu if gpus == 1 else f"{gpus}x {gpu}, DDP"}


_SYNTH_MIX = ("stage 6: a mix of five generators (vision.training.synth.mix): document words 35%, "
              "multilingual words 15% (80% of dictionary words from 16 non-English lists: Debian wngerman, "
              "wfrench, wspanish, witalian, wportuguese, wdutch, wpolish, wdanish, wswedish, wnorwegian, GPL-2 "
              "and compatible; hunspell-cs/-sk/-hu/-ro/-sl/-hr expanded with unmunch, GPL/LGPL/MPL), scene text "
              "on photographs 30%, screen/video overlays 10%, receipts 10%; stages 7-8: the same generators with "
              "document words 30% and scene text 35%; 247 font files from 37 Debian font "
              "packages (OFL, GPL with font exception, Apache-2.0, Bitstream Vera/DejaVu, URW AFPL/GPL, "
              "LPPL); 62 photographs from Debian wallpaper packages (gnome-backgrounds CC-BY-SA-3.0, "
              "plasma-workspace-wallpapers GPL-2+, mate-backgrounds GPL-2+, ukui-wallpapers CC-BY-SA-3.0), "
              "downscaled to 640 px, 8 more held out as text-free negatives; no real text images")


CRNN_MOBILENET_SMALL: Weights | None = Weights(
    file="reco_crnn_mobilenet_small.safetensors",
    sha256="5a754c809748d6251dc5c88202b635540deb483ff67429547a8868ccb5d0df8d",
    meta={
        "num_params": 2809525,
        "file_size": 5675954,
        "dtype": "float16 storage (trained and run in float32; load_weights upcasts)",
        "steps": 184260,
        "samples_seen": 109745152,
        "train_minutes_gpu": 270.4,
        "recipe": {
            "arch": "crnn_mobilenet_small",
            "model": {"backbone": {"width_mult": 1.25, "blocks": "rect_late"}},
            "command": _TRAIN + " (then --resume OUT/checkpoint for each further call; --init the previous "
                                "stage's weights from stage 2 on; stages 6-11 under torchrun "
                                "--nproc_per_node=N: N = 2 (stage 6), 3 (7), 4 (8), 2 (9, 10), 4 (11); each "
                                "anneal with --resume --restart-schedule; stage 12's and 13's runs "
                                "single-process, --set seed=N where a run names one); a soup stage "
                                "averages its ingredients: "
                                + _SOUP,
            "stages": [
                _stage(_CRNN + "stage1_scratch.json", None, 3, 50896, "H200"),
                _stage(_CRNN + "stage2_dust.json", "stage 1", 2, 35612, "H200"),
                _stage(_CRNN + "stage3_rect_late.json", "stage 2", 2, 21895, "H200"),
                _stage(_CRNN + "stage4_frozen_initials.json", "stage 3", 1, 11042, "H200"),
                _stage(_CRNN + "stage5_frozen_anneal.json", "stage 4", 1, 13268, "H200"),
                _stage(_CRNN + "stage6_scene.json", "stage 5", 2, 4526, "H200", gpus=2),
                _stage(_CRNN + "stage6_scene_anneal.json", "stage 6 (its checkpoint)", 1, 2550, "H200", gpus=2),
                _stage(_CRNN + "stage7_scene.json", "stage 6's anneal", 1, 2151, "H200", gpus=3),
                _stage(_CRNN + "stage7_scene_anneal.json", "stage 7 (its checkpoint)", 1, 2275, "H200", gpus=3),
                _stage(_CRNN + "stage8_scene_more.json", "stage 7's anneal (its EMA weights)", 1, 1426, "H200",
                       gpus=4),
                _stage(_CRNN + "stage9_enumerations.json", "stage 8 (its EMA weights, float16)", 1, 2826, "H200",
                       gpus=2),
                _stage(_CRNN + "stage10_enumerations_again.json", "stage 9 (its EMA weights, float16)", 1, 2776,
                       "H200", gpus=2),
                _stage(_CRNN + "stage11_enumerations_more.json", "stage 10 (its EMA weights, float16)", 1, 1426,
                       "H200", gpus=4),
                {"soup": [  # four single-GPU runs from stage 11, each on one H200 of a 2-GPU host
                    _stage(_S12 + "enumerations.json", _S11, 1, 6337, "H200"),
                    _stage(_S12 + "multilingual.json", _S11, 1, 6354, "H200"),
                    {**_stage(_S12 + "enumerations.json", _S11, 1, 5932, "H200"), "set": "seed=65"},
                    {**_stage(_S12 + "multilingual.json", _S11, 1, 5936, "H200"), "set": "seed=66"},
                ]},
                {"soup": ["stage 12",  # stage 12's file and one run from it with narrowed scene lettering
                          _stage(_CRNN + "stage13_soup_squeeze.json", "stage 12 (its float16 file)", 1, 7032,
                                 "H200")]},
            ],
            "exported": "stage 12: the uniform average of its four runs' EMA weights ("
                        + _SOUP.format(ingredients="A B C D")
                        + "); stage 13: the uniform average of stage 12's file and its run's EMA weights, "
                          "stored as float16",
            "card": "docs/models/recognition.md, section 'Weights: reco_crnn_mobilenet_small.safetensors'",
        },
        "data": _SYNTH + "; " + _SYNTH_MIX,
        "metrics": {
            "words_dev": {"word_accuracy": 0.8786, "word_accuracy_cased": 0.8720, "cer": 0.0380,
                          "decoding": "greedy (lexicon=None)",
                          "command": "vision eval recognition --data ../shared/data/words_dev --lexicon none "
                                     "--no-slanted"},
            "words_dev_lexicon_en": {"word_accuracy": 0.8887, "word_accuracy_cased": 0.8821, "cer": 0.0357,
                                     "decoding": "greedy + English lexicon, each crop read once",
                                     "command": "vision eval recognition --data ../shared/data/words_dev "
                                                "--no-slanted"},
            "funsd_dev_words_lexicon_en": {
                "word_accuracy": 0.8877, "word_accuracy_cased": 0.8814, "cer": 0.0347, "n": 21888,
                "decoding": "greedy + English lexicon",
                "command": "vision eval recognition --data ../shared/data/funsd_dev --no-slanted"},
            "funsd_dev_words": {"word_accuracy": 0.8779, "word_accuracy_cased": 0.8718, "cer": 0.0369,
                                "n": 21888, "decoding": "greedy (lexicon=None)",
                                "command": "vision eval recognition --data ../shared/data/funsd_dev --lexicon none "
                                           "--no-slanted"},
            "ic15_words_dev_lexicon_en": {
                "word_accuracy": 0.6535, "word_accuracy_cased": 0.6394, "cer": 0.2202, "n": 1065,
                "decoding": "greedy + English lexicon",
                "command": "vision eval recognition --data ../shared/data/ic15_words_dev --no-slanted"},
            "ic15_words_dev": {"word_accuracy": 0.6282, "word_accuracy_cased": 0.6150, "cer": 0.2261, "n": 1065,
                               "decoding": "greedy (lexicon=None)",
                               "command": "vision eval recognition --data ../shared/data/ic15_words_dev "
                                          "--lexicon none --no-slanted"},
            "words_dev_lexicon_en_slanted": {
                "word_accuracy": 0.8884, "word_accuracy_cased": 0.8821, "cer": 0.0358, "n": 3648,
                "decoding": "greedy + English lexicon, slanted words read again sheared (the predictor's default)",
                "command": "vision eval recognition --data ../shared/data/words_dev"},
            "funsd_dev_words_lexicon_en_slanted": {
                "word_accuracy": 0.8875, "word_accuracy_cased": 0.8814, "cer": 0.0348, "n": 21888,
                "decoding": "greedy + English lexicon, slanted words read again sheared (the predictor's default)",
                "command": "vision eval recognition --data ../shared/data/funsd_dev"},
            "ic15_words_dev_lexicon_en_slanted": {
                "word_accuracy": 0.6826, "word_accuracy_cased": 0.6695, "cer": 0.1926, "n": 1065,
                "decoding": "greedy + English lexicon, slanted words read again sheared (the predictor's default)",
                "command": "vision eval recognition --data ../shared/data/ic15_words_dev"},
            "funsd_dev_ocr": {"end_to_end_f1": 0.7646, "page_cer": 0.1056, "page_cer_case_insensitive": 0.104,
                              "pages": 149, "iou": 0.5, "detector": "default",
                              "command": "vision eval ocr --data ../shared/data/funsd_dev --device cpu"},
            "sroie_dev_ocr": {"end_to_end_f1": 0.8313, "page_cer": 0.2501, "page_cer_case_insensitive": 0.0497,
                              "pages": 50, "iou": 0.5, "detector": "default",
                              "command": "vision eval ocr --data ../shared/data/sroie_dev --device cpu"},
            "ml_dev_ocr": {"page_cer": 0.0730, "page_cer_case_insensitive": 0.0698, "pages": 69,
                           "lang": "default (English lexicon)", "detector": "default",
                           "command": "vision eval ocr --data ../shared/data/ml_dev --device cpu"},
            "ml_dev_ocr_lang": {"page_cer": 0.0710, "page_cer_case_insensitive": 0.0678, "pages": 69,
                                "lang": "each page's own (de 36, fr 7, it 13, sk 13)",
                                "command": "python benchmarks/ml_dev_lang.py --data ../shared/data/ml_dev"},
            "synthetic_val": {"word_accuracy": 0.7476, "word_accuracy_cased": 0.7446, "cer": 0.1222, "n": 2048,
                              "note": "stage 11's validation set: its five-generator mix (seed 62), read on the "
                                      "2-core CPU in float32 (stage 12's weights: 0.7451)"},
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
        "recipe": {
            "arch": "crnn_transformer_small",
            "model": {},
            "command": _TRAIN + " (then --resume OUT/checkpoint for each further call; --init the previous "
                                "stage's weights); a soup stage averages its ingredients: " + _SOUP,
            "stages": [
                _stage(_TRANSFORMER + "stage1_warm_start.json",
                       "the CRNN recipe's stage 3 weights (vision/models/weights/reco_crnn_mobilenet_small"
                       ".safetensors at commit 4a8e22d; 241 of 296 tensors: the backbone)", 2, 19170, "H100"),
                _stage(_TRANSFORMER + "stage2_dust.json", "stage 1", 2, 18305, "H200"),
                _stage(_TRANSFORMER + "stage3_initials.json", "stage 2", 2, 17940, "H100"),
                {"soup": ["stage 3",
                          _stage(_TRANSFORMER + "stage4_soup_distill.json", "stage 3", 3, 27904, "H200"),
                          _stage(_TRANSFORMER + "stage4_soup_fax.json", "stage 3", 2, 9247, "H200")]},
                {"soup": [_stage(_TRANSFORMER + "stage5_soup_short.json", "stage 4", 2, 8380, "H200"),
                          _stage(_TRANSFORMER + "stage5_soup_shortfax.json", "stage 4", 2, 8560, "H200"),
                          _stage(_TRANSFORMER + "stage5_soup_short_b.json", "stage 4", 1, 4677, "H200"),
                          _stage(_TRANSFORMER + "stage5_soup_shortfax_b.json", "stage 4", 1, 4649, "H200")]},
            ],
            "exported": "EMA weights of each ingredient; each soup stored as float16",
            "teacher": "stage4_soup_distill's teacher 'crnn_mobilenet_small' was the CRNN recipe's stage 5 (sha256 "
                       "ba1d5dd78a5db7c61cbfcb53d28f573c8e57f2add73c96b8f5b1061177eee007, the file at commit "
                       "b9b528d); set teacher_weights to it to reproduce",
            "card": "docs/models/recognition.md, section 'Weights: reco_crnn_transformer_small.safetensors'",
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
            "funsd_dev_ocr": {"end_to_end_f1": 0.7538, "page_cer": 0.1195, "page_cer_case_insensitive": 0.1176,
                              "pages": 149, "iou": 0.5, "detector": "default",
                              "command": "vision eval ocr --data ../shared/data/funsd_dev --reco-arch "
                                         "crnn_transformer_small --device cpu"},
            "ic15_words_dev_lexicon_en": {
                "word_accuracy": 0.2761, "word_accuracy_cased": 0.2714, "cer": 0.6450, "n": 1065,
                "decoding": "greedy + English lexicon",
                "command": "vision eval recognition --data ../shared/data/ic15_words_dev --arch "
                           "crnn_transformer_small"},
            "ic15_words_dev": {"word_accuracy": 0.2638, "word_accuracy_cased": 0.2601, "cer": 0.6468, "n": 1065,
                               "decoding": "greedy (lexicon=None)",
                               "command": "vision eval recognition --data ../shared/data/ic15_words_dev --arch "
                                          "crnn_transformer_small --lexicon none"},
        },
        "note": "reads document crops as well as the default CRNN (funsd_dev crops 88.49% vs 88.15%) but was "
                "not trained on scene text (ic15_words_dev 27.61% vs 60.00%), and runs at about 0.6x its speed "
                "on the CPU",
    },
)
