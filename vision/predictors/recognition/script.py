"""Flag text no shipped recognizer reads: the script classifier's predictor and the page rule.

Given Cyrillic, Greek, Arabic or Chinese the recognizers still emit Latin letters ("MocKBa" for "Москва"),
often with high confidence. :class:`ScriptClassifier` looks at each crop (grey, height 32, width padded or
cut to 128) and gives the probability of each of :data:`~vision.models.recognition.script.SCRIPTS`;
:func:`flag_scripts` turns that into low word confidences and a page warning naming the probable script.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
import torch

from vision.models.recognition.script import SCRIPTS, WEIGHTS, WIDTH, ScriptCNN
from vision.ops.median import median

__all__ = ["ScriptClassifier", "flag_scripts", "load_script_classifier", "prepare", "script_warning"]

# Page rule (measured in docs/models/recognition.md; see flag_scripts): a page is flagged when at least
# FLAG_SHARE of its words with 3+ letters (MIN_WORDS at least) are flagged, FLAG_WORDS of them at least, and
# one script holds SCRIPT_SHARE of their foreign probability.
WORD_P = 0.5
FLAG_SHARE = 0.3
MIN_WORDS = 3
FLAG_WORDS = 2
SCRIPT_SHARE = 0.6
CODE_LETTERS = 4  # longest run of capitals read as a code; chosen on the rendered test pages (recognition.md)


def prepare(crop: np.ndarray) -> np.ndarray:
    """A crop (RGB or grey uint8) as a ``32 x WIDTH`` grey float32 image, dark text on a light ground: height
    32 (aspect kept), light text inverted (the border is taken as the ground), cut or padded to WIDTH."""
    grey = cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY) if crop.ndim == 3 else crop
    h, w = grey.shape[:2]
    if h < 2 or w < 2:
        return np.ones((32, WIDTH), np.float32)
    nw = max(4, round(w * 32 / h))
    img = cv2.resize(grey, (nw, 32), interpolation=cv2.INTER_AREA if h > 32 else cv2.INTER_LINEAR)
    img = img.astype(np.float32) / 255.0
    border = np.concatenate([img[0], img[-1], img[:, 0], img[:, -1]])
    if median(border) < img.mean():  # light text on a dark ground
        img = 1.0 - img
    lo, hi = float(img.min()), float(img.max())
    img = (img - lo) / max(hi - lo, 0.1)
    if nw >= WIDTH:
        start = (nw - WIDTH) // 2
        return np.ascontiguousarray(img[:, start:start + WIDTH])
    return np.pad(img, ((0, 0), (0, WIDTH - nw)), constant_values=1.0)


class ScriptClassifier:
    """``classifier(crops) -> [N, len(SCRIPTS)]`` probabilities (CPU, batched).

    Args:
        model: the network.
        batch_size: crops per forward pass.
        runner: runs ``model`` instead of it (its onnxruntime export: ~3x faster than eager PyTorch for the
            ~12 crops of a form page on our 2-core CPU, 2.9 against 8.4 ms).
    """

    def __init__(self, model: ScriptCNN, batch_size: int = 256, runner: Callable | None = None) -> None:
        self.model, self.batch_size, self.runner = model.eval(), batch_size, runner

    def __getstate__(self) -> dict:
        """Pickled without the onnxruntime session (worker processes); unpickling opens the cached export."""
        return {**self.__dict__, "runner": self.runner is not None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.runner = _onnx_runner(self.model, required=False) if state["runner"] else None

    @torch.inference_mode()
    def __call__(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        run = self.runner or self.model
        out = []
        for i in range(0, len(crops), self.batch_size):
            x = torch.from_numpy(np.stack([prepare(c) for c in crops[i:i + self.batch_size]]))[:, None]
            out.append(torch.softmax(run(x).float(), dim=1).numpy())
        return np.concatenate(out) if out else np.zeros((0, len(SCRIPTS)), np.float32)


ONNX_AXES = {"images": {0: "batch"}, "logits": {0: "batch"}}


@lru_cache(maxsize=2)
def load_script_classifier(path: str | None = None, onnx: bool | None = None) -> ScriptClassifier | None:
    """The shipped classifier (``None`` when its weights file is absent); ``onnx``: run its onnxruntime export
    (``None``: when onnxruntime is installed, else eager PyTorch; ``True`` requires it)."""
    from safetensors.torch import load_file

    from vision.predictors._device import wants_onnx

    file = Path(path) if path else WEIGHTS
    if not file.exists():
        return None
    state = {k: v.float() for k, v in load_file(str(file)).items()}
    model = ScriptCNN(width=2 * state["features.0.weight"].shape[0])  # the width the file was trained at
    model.load_state_dict(state)
    model.eval()
    fast = wants_onnx(onnx, torch.device("cpu"), torch.float32)
    runner = _onnx_runner(model, required=bool(onnx)) if fast else None
    return ScriptClassifier(model, runner=runner)


def _onnx_runner(model: ScriptCNN, *, required: bool) -> Callable | None:
    from vision.predictors._device import onnx_runner

    return onnx_runner(model, torch.zeros(1, 1, 32, WIDTH), name="script_cnn", device=torch.device("cpu"),
                       required=required, threads=torch.get_num_threads(), dynamic_axes=ONNX_AXES)


_LETTERS = re.compile(r"[^\W\d_]{3,}")


def _code(runs: list[str]) -> bool:
    """Whether a reading's letter runs are those of a code or an acronym (``RPCBS-0``, ``WCC``): capitals of
    the basic Latin alphabet only, at most :data:`CODE_LETTERS` a run."""
    return all(r.isascii() and r.isupper() and len(r) <= CODE_LETTERS for r in runs)


def flag_scripts(crops: Sequence[np.ndarray], texts: list[tuple[str, float]],
                 classifier: ScriptClassifier | None = None,
                 lexicon: Container[str] | None = None) -> tuple[list[tuple[str, float]], str | None]:
    """Lower the confidence of words whose crop is in a script the recognizer does not read, and name the
    page's probable script when enough of its words are: returns ``(texts, script or None)``.

    A word is flagged when a non-Latin script gets ``>= WORD_P`` and its reading has a run of 3+ letters of
    which none is a ``lexicon`` word (lower case; ``None``: no lexicon check), and it is no code
    (:func:`_code`: ``RRXF-0``, ``WCC``): Latin text the classifier misjudges is mostly read as dictionary
    words or codes, a foreign script as strings like "MocKBa". Its confidence becomes
    ``confidence x P(Latin)``. The page is named after the script with the most probability over its
    flagged words when they are at least ``FLAG_SHARE`` of its words with 3+ letters and ``FLAG_WORDS`` or
    more, and that script holds ``SCRIPT_SHARE`` of their probability of scripts other than Latin."""
    classifier = classifier or load_script_classifier()
    if classifier is None or not crops:
        return texts, None
    runs = [_LETTERS.findall(text) for text, _ in texts]
    counted = sum(1 for r in runs if r)
    # only readings with letters, no dictionary word and no code can be flagged: the classifier reads those
    todo = [i for i, r in enumerate(runs)
            if r and not (lexicon is not None and any(w.lower() in lexicon for w in r)) and not _code(r)]
    probs = classifier([crops[i] for i in todo]) if todo else np.zeros((0, len(SCRIPTS)))
    out, mass = list(texts), np.zeros(len(SCRIPTS))
    flagged = 0
    for i, p in zip(todo, probs):
        if p[1:].max() >= WORD_P:
            out[i] = (texts[i][0], float(texts[i][1]) * float(p[0]))
            flagged += 1
            mass[1:] += p[1:]
    if counted >= MIN_WORDS and flagged >= max(FLAG_WORDS, FLAG_SHARE * counted):
        top = int(np.argmax(mass))
        if mass[top] >= SCRIPT_SHARE * mass.sum():  # junk read off a photo's texture scatters over scripts
            return out, SCRIPTS[top]
    return out, None


def script_warning(script: str) -> str:
    """The page warning for text in ``script``."""
    return (f"text in {script} script: no shipped recognizer reads it (words read as Latin letters, with low "
            f"confidence)")
