"""``vision eval ocr``: scores of the README on a small page set written here (never ../shared/data)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).parents[1] / "pipelines"))
from _ocr_stages import TEXT, VOCABULARY, InkDetector, TemplateReader, render_page  # noqa: E402

from vision.app.cli import build_parser  # noqa: E402
from vision.evaluation import ocr as ocr_eval  # noqa: E402
from vision.evaluation.data import open_set  # noqa: E402
from vision.pipelines.ocr.predictor import ocr_predictor  # noqa: E402


def _write_set(root: Path, pages: list[tuple[np.ndarray, list]], *, ignore_box=None) -> Path:
    (root / "images").mkdir(parents=True)
    (root / "gt").mkdir()
    ids = []
    for i, (image, words) in enumerate(pages):
        sid = f"p{i}"
        ids.append(sid)
        Image.fromarray(image).save(root / "images" / f"{sid}.png")
        gt_words = [{"text": t, "polygon": q.tolist(), "ignore": False} for t, q in words]
        if ignore_box is not None:
            x0, y0, x1, y1 = ignore_box
            gt_words.append({"text": "", "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], "ignore": True})
        gt = {
            "id": sid,
            "image": f"images/{sid}.png",
            "width": image.shape[1],
            "height": image.shape[0],
            "level": "word",
            "source": "test",
            "words": gt_words,
        }
        (root / "gt" / f"{sid}.json").write_text(json.dumps(gt))
    (root / "index.json").write_text(json.dumps({"set": "tiny", "kind": "page", "level": "word", "ids": ids}))
    return root


@pytest.fixture
def page_set(tmp_path):
    pages = [render_page(TEXT[i:] + TEXT[:i]) for i in range(2)]
    return _write_set(tmp_path / "tiny", pages)


def test_perfect_reader_scores_one(page_set):
    predictor = ocr_predictor(det_predictor=InkDetector(), reco_predictor=TemplateReader())
    report = ocr_eval.evaluate_ocr(predictor, open_set(page_set), batch_size=2)
    assert report["pages"] == 2 and report["pages_per_s"] > 0
    for key in ("detection", "end_to_end"):
        assert report[key]["0.5"]["f1"] == 1.0 and report[key]["0.5"]["n_gt"] == 2 * 21
    assert report["cer"] == 0.0 and report["cer_nospace"] == 0.0


def test_misread_words_lower_end_to_end_but_not_detection(page_set):
    missing = {"Invoice", "Harbor", "thirty"}  # read as some other word of the vocabulary
    reader = TemplateReader([w for w in VOCABULARY if w not in missing])
    report = ocr_eval.evaluate_ocr(
        ocr_predictor(det_predictor=InkDetector(), reco_predictor=reader), open_set(page_set)
    )
    e2e = report["end_to_end"]["0.5"]
    assert report["detection"]["0.5"]["f1"] == 1.0
    assert e2e["tp"] == 2 * (21 - len(missing)) and e2e["n_pred"] == e2e["n_gt"] == 42
    assert 0 < report["cer"] < 0.2
    for key in ("cer_counts", "cer_nospace_counts"):  # misread words: wrong characters, none missing or extra
        c = report[key]
        assert c["missing"] + c["extra"] + c["wrong"] == c["errors"] > 0 and c["wrong"] > 0


def test_text_never_found_counts_as_missing(page_set):
    class FirstWords(InkDetector):  # finds only five words of each page
        def _page(self, image):
            d = super()._page(image)
            return type(d)(d.boxes[:5], d.scores[:5], d.polygons[:5])

    report = ocr_eval.evaluate_ocr(
        ocr_predictor(det_predictor=FirstWords(), reco_predictor=TemplateReader()), open_set(page_set)
    )
    c = report["cer_nospace_counts"]
    assert c["missing"] == c["errors"] > 0 and c["extra"] == c["wrong"] == 0
    worst = report["worst_pages"]  # every page, most errors first, each with its own split
    assert sorted(r["id"] for r in worst) == ["p0", "p1"]
    assert worst[0]["errors"] >= worst[1]["errors"] and all(r["missing"] == r["errors"] > 0 for r in worst)
    assert sum(r["errors"] for r in worst) == report["cer_counts"]["errors"]


def test_predictions_on_ignore_regions_are_dropped(tmp_path):
    image, words = render_page()
    kept = words[3:]  # the first three words are marked unreadable in the ground truth
    x0, y0 = np.min([q.min(0) for _, q in words[:3]], axis=0) - 2
    x1, y1 = np.max([q.max(0) for _, q in words[:3]], axis=0) + 2
    root = _write_set(tmp_path / "ign", [(image, kept)], ignore_box=(x0, y0, x1, y1))
    report = ocr_eval.evaluate_ocr(
        ocr_predictor(det_predictor=InkDetector(), reco_predictor=TemplateReader()), open_set(root)
    )
    assert report["detection"]["0.5"]["n_pred"] == len(kept) and report["end_to_end"]["0.5"]["f1"] == 1.0
    assert report["cer"] == 0.0


def test_is_a_discovered_eval_task(page_set):
    args = build_parser().parse_args(
        [
            "eval",
            "ocr",
            "--data",
            str(page_set),
            "--json",
            "--limit",
            "1",
            "--det-arch",
            "x",
            "--reco-arch",
            "y",
            "--device",
            "cpu",
        ]
    )
    assert args.func is ocr_eval.run and args.limit == 1 and args.json
    assert ocr_eval.TASK == "ocr"
