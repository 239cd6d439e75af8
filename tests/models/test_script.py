"""The script classifier's input preparation and the page rule that turns its outputs into flags."""

from __future__ import annotations

import numpy as np
import torch

from vision.models.recognition.script import SCRIPTS, WIDTH, ScriptCNN
from vision.predictors.recognition.script import ScriptClassifier, flag_scripts, prepare


def test_prepare_normalises_polarity_and_width() -> None:
    dark_on_light = np.full((20, 300, 3), 240, np.uint8)
    dark_on_light[5:15, 10:290] = 20
    light_on_dark = 255 - dark_on_light
    a, b = prepare(dark_on_light), prepare(light_on_dark)
    assert a.shape == b.shape == (32, WIDTH) and a.dtype == np.float32
    np.testing.assert_allclose(a, b, atol=1e-5)  # the same ink, whatever its polarity
    narrow = prepare(np.full((32, 10, 3), 255, np.uint8))
    assert narrow.shape == (32, WIDTH) and narrow[:, -1].min() == 1.0  # padded with the ground


class _Fixed(ScriptClassifier):
    """A classifier that answers with fixed probabilities per crop."""

    def __init__(self, probs: np.ndarray) -> None:
        super().__init__(ScriptCNN())
        self.probs = probs

    def __call__(self, crops):
        return self.probs[: len(crops)]


def test_flag_scripts_rule() -> None:
    texts = [("MocKBa", 0.9), ("CaHKT", 0.8), ("Tlerep6ypr", 0.95), ("1999", 0.99), ("a", 0.9), ("Total", 0.9),
             ("Invoice", 0.9), ("amount", 0.9), ("number", 0.9), ("Smith", 0.9)]
    crops = [np.zeros((20, 60, 3), np.uint8)] * len(texts)
    cyr = np.zeros((len(texts), len(SCRIPTS)), np.float32)
    cyr[:, SCRIPTS.index("Cyrillic")] = 0.9
    cyr[:, 0] = 0.1
    out, script = flag_scripts(crops, texts, _Fixed(cyr))
    assert script == "Cyrillic" and [t for t, _ in out] == [t for t, _ in texts]
    assert all(conf <= 0.1 for (t, conf) in out if t not in ("1999", "a"))  # no 3-letter run: not judged
    assert out[3:5] == texts[3:5]
    latin = np.zeros_like(cyr)
    latin[:, 0] = 1.0
    assert flag_scripts(crops, texts, _Fixed(latin)) == (texts, None)
    # the classifier calls everything Cyrillic, but readings that are dictionary words are not flagged
    words = {"total", "invoice", "amount", "number", "smith"}
    out, script = flag_scripts(crops, texts, _Fixed(cyr), lexicon=words)
    assert script == "Cyrillic" and out[5:] == texts[5:]  # 3 of 8 words with letters: still 30%+
    out, script = flag_scripts(crops[1:], texts[1:], _Fixed(cyr[1:]), lexicon=words)
    assert script is None and out[0][1] < 0.1  # 2 of 7: the words are flagged, the page is not


def test_codes_and_acronyms_are_never_flagged() -> None:
    """Capitals of the basic Latin alphabet in runs of at most 4 letters (part numbers, acronyms) look like
    Cyrillic or Greek capitals to the classifier; longer capitals, accents and lower case are still judged."""
    texts = [("RRXF-0", 0.9), ("WCC", 0.9), ("CPCL", 0.9), ("AB-12-XYZ", 0.9), ("RPCBS", 0.9),
             ("MOCKBA", 0.9), ("OTWËT", 0.9), ("Tlerep", 0.9)]
    crops = [np.zeros((20, 60, 3), np.uint8)] * len(texts)
    cyr = np.zeros((len(texts), len(SCRIPTS)), np.float32)
    cyr[:, SCRIPTS.index("Cyrillic")], cyr[:, 0] = 0.9, 0.1
    out, script = flag_scripts(crops, texts, _Fixed(cyr))
    assert out[:4] == texts[:4] and all(conf < 0.1 for _, conf in out[4:])
    assert script == "Cyrillic"  # 4 of 8 words: the page is still named
    codes, script = flag_scripts(crops[:4], texts[:4], _Fixed(cyr[:4]))
    assert (codes, script) == (texts[:4], None)


def test_classifier_batches() -> None:
    torch.manual_seed(0)
    clf = ScriptClassifier(ScriptCNN(), batch_size=3)
    probs = clf([np.full((h, 3 * h, 3), 200, np.uint8) for h in (10, 20, 30, 40, 50)])
    assert probs.shape == (5, len(SCRIPTS)) and np.allclose(probs.sum(1), 1, atol=1e-5)
    assert clf([]).shape == (0, len(SCRIPTS))


def test_onnx_classifier_matches_eager_pytorch() -> None:
    """The shipped classifier's onnxruntime export against fp32 eager on fresh crops: probabilities within 1e-4."""
    from vision.predictors.recognition.script import load_script_classifier

    fast, eager = load_script_classifier(onnx=True), load_script_classifier(onnx=False)
    assert fast.runner is not None and eager.runner is None
    rng = np.random.default_rng(7)
    crops = [rng.integers(0, 255, (int(h), int(w), 3), dtype=np.uint8)
             for h, w in zip(rng.integers(8, 60, 37), rng.integers(8, 400, 37))]
    assert np.abs(fast(crops) - eager(crops)).max() < 1e-4
    import pickle

    again = pickle.loads(pickle.dumps(fast))  # worker processes get the classifier pickled
    assert again.runner is not None and np.abs(again(crops) - eager(crops)).max() < 1e-4


def test_a_page_is_named_only_on_consistent_evidence() -> None:
    """Two flagged words at least, and one script holding 60% of their foreign probability: junk read off a
    photo's texture is judged a different script word by word."""
    texts = [("Xqzv", 0.9), ("Wvkj", 0.9), ("Plmr", 0.9)]
    crops = [np.zeros((20, 60, 3), np.uint8)] * len(texts)
    one = np.zeros((3, len(SCRIPTS)), np.float32)
    one[:, 0] = 1.0
    one[0, 0], one[0, SCRIPTS.index("Arabic")] = 0.2, 0.8
    out, script = flag_scripts(crops, texts, _Fixed(one))
    assert script is None and out[0][1] < 0.2 and out[1:] == texts[1:]  # one word of three: not the page
    scattered = np.zeros_like(one)
    for row, name in enumerate(("Arabic", "Thai", "Hebrew")):
        scattered[row, 0], scattered[row, SCRIPTS.index(name)] = 0.2, 0.8
    out, script = flag_scripts(crops, texts, _Fixed(scattered))
    assert script is None and all(conf < 0.2 for _, conf in out)  # every word flagged, no script named
    scattered[2, SCRIPTS.index("Hebrew")], scattered[2, SCRIPTS.index("Arabic")] = 0.0, 0.8
    assert flag_scripts(crops, texts, _Fixed(scattered))[1] == "Arabic"  # 1.6 of 2.4: two thirds
