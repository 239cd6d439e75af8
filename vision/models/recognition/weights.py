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
_TRANSFORMER = "configs/recognition/crnn_transformer_small/"


def _stage(config: str, init: str | None, calls: int, steps: int, gpu: str) -> dict[str, object]:
    """One training run: its config, what it starts from, its GPU calls (each resuming the previous one) and
    its steps of 512 samples."""
    return {"config": config, "init": init, "calls": calls, "steps": steps, "samples": steps * 512,
            "gpu": gpu}


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
        "recipe": {
            "arch": "crnn_mobilenet_small",
            "model": {"backbone": {"width_mult": 1.25, "blocks": "rect_late"}},
            "command": _TRAIN + " (then --resume OUT/checkpoint for each further call; --init the previous "
                                "stage's weights from stage 2 on)",
            "stages": [
                _stage(_CRNN + "stage1_scratch.json", None, 3, 50896, "H200"),
                _stage(_CRNN + "stage2_dust.json", "stage 1", 2, 35612, "H200"),
                _stage(_CRNN + "stage3_rect_late.json", "stage 2", 2, 21895, "H200"),
                _stage(_CRNN + "stage4_frozen_initials.json", "stage 3", 1, 11042, "H200"),
                _stage(_CRNN + "stage5_frozen_anneal.json", "stage 4", 1, 13268, "H200"),
            ],
            "exported": "EMA weights of stage 5, stored as float16",
            "card": "docs/models/recognition.md, section 'Weights: reco_crnn_mobilenet_small.safetensors'",
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
                              "note": "stage 5's synthetic validation set (seed 15)"},
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
                       "vision/models/weights/reco_crnn_mobilenet_small.safetensors (241 of 296 tensors: "
                       "the backbone)", 2, 19170, "H100"),
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
        },
        "note": "more accurate than the default CRNN (funsd_dev crops 88.49% vs 87.82%, McNemar z = 4.8) and "
                "about 0.6x its speed on the CPU",
    },
)
