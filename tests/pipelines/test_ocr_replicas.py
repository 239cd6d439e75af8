"""``ocr_predictor(replicas=N)``: each call's pages read in N processes, back in order, as one process reads
them (shipped weights: replicas build the same models); a replica that dies makes later calls fail clearly."""

from __future__ import annotations

import numpy as np
import pytest
from _ocr_stages import render_page

import vision
from vision.errors import VisionError
from vision.pipelines.ocr.replicas import split_evenly


def test_split_evenly_covers_every_item_in_order() -> None:
    for count, parts in [(50, 12), (3, 2), (2, 5), (1, 1), (12, 12)]:
        slices = split_evenly(count, parts)
        assert len(slices) == min(count, parts)
        assert [i for s in slices for i in range(count)[s]] == list(range(count))
        sizes = [s.stop - s.start for s in slices]
        assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


@pytest.fixture(scope="module")
def pages() -> list[np.ndarray]:
    out = []
    for seed in range(3):
        image, _ = render_page(seed=seed) if "seed" in render_page.__code__.co_varnames else render_page()
        out.append(np.ascontiguousarray(image[:, ::-1] if seed == 1 else image))
    return out


def test_replicas_read_what_one_process_reads(pages) -> None:
    one = vision.ocr_predictor(device="cpu")
    two = vision.ocr_predictor(device="cpu", replicas=2)
    try:
        assert two.replicas is not None and len(two.replicas) == 2
        got, want = two(pages), one(pages)
        assert [p.page_idx for p in got.pages] == [0, 1, 2]
        assert got.export() == want.export()
        assert two(pages[:1]).export()["pages"] == want.export()["pages"][:1]  # fewer pages than replicas
        assert two([]).pages == []
        # copies made per request read in this process, with the same result
        assert two.with_options(detect_orientation=False) is two
        assert two.with_options(detect_orientation=True).replicas is None
    finally:
        two.close()
    assert two.replicas is None and two(pages[:1]).export()["pages"] == want.export()["pages"][:1]


def test_a_dead_replica_fails_the_call_with_a_clear_error(pages) -> None:
    predictor = vision.ocr_predictor(device="cpu", replicas=2)
    try:
        predictor.replicas._procs[1].kill()
        predictor.replicas._procs[1].join(10)
        with pytest.raises(VisionError, match="replica"):
            predictor(pages)
        with pytest.raises(VisionError, match="replica"):  # and every later call, without hanging
            predictor(pages[:1])
    finally:
        predictor.close()


def test_replicas_must_be_positive() -> None:
    with pytest.raises(ValueError, match="replicas"):
        vision.ocr_predictor(device="cpu", replicas=0)


def test_pages_keep_the_callers_image_arrays(pages) -> None:
    """Pixels cross the pipe once: a page whose image is its input's comes back holding the caller's array."""
    from vision.io.page import PageImage

    inputs = [PageImage(image=im, source=f"p{i}.png", index=i, original_size=im.shape[:2]) for i, im in enumerate(pages)]
    predictor = vision.ocr_predictor(device="cpu", replicas=2)
    try:
        doc = predictor(inputs)
    finally:
        predictor.close()
    assert all(p.image is given.image for p, given in zip(doc.pages, inputs))


def test_long_documents_go_to_the_replicas_a_batch_at_a_time(pages, monkeypatch) -> None:
    """A document is read and sent ``pages_per_batch`` pages at a time (never held whole), in order."""
    predictor = vision.ocr_predictor(device="cpu", replicas=2, pages_per_batch=2)
    sizes: list[int] = []
    pool = predictor.replicas
    original = type(pool).submit
    monkeypatch.setattr(type(pool), "submit", lambda self, batch: sizes.append(len(batch)) or original(self, batch))
    try:
        doc = predictor(pages + pages[:2])  # 5 pages
    finally:
        predictor.close()
    assert sizes == [2, 2, 1]
    assert [p.page_idx for p in doc.pages] == [0, 1, 2, 3, 4]


def test_calls_from_several_threads_share_the_replicas(pages) -> None:
    """The service's batcher threads call one pool at once: each call gets its own pages back, in order."""
    from concurrent.futures import ThreadPoolExecutor

    def words(page):
        return [(w.value, tuple(np.round(w.geometry, 6))) for w in page.words]

    want = [words(p) for p in vision.ocr_predictor(device="cpu")(pages).pages]
    predictor = vision.ocr_predictor(device="cpu", replicas=2)
    try:
        orders = [[0, 1, 2], [2, 1, 0], [1], [2, 0]]
        with ThreadPoolExecutor(len(orders)) as ex:
            got = list(ex.map(lambda order: predictor.replicas([pages[i] for i in order]), orders))
    finally:
        predictor.close()
    for order, result in zip(orders, got):
        assert [words(p) for p in result] == [want[i] for i in order]
        assert all(words(p) for p in result)


def test_replicas_run_eager_models_unless_told() -> None:
    """Processes sharing one GPU build their models without CUDA graphs (measured slower at 12 replicas); an
    explicit ``cuda_graphs`` is kept."""
    from vision.pipelines.ocr.options import OCROptions
    from vision.pipelines.ocr.replicas import replica_options

    assert replica_options(OCROptions(replicas=4)) == OCROptions(replicas=1, cuda_graphs=False)
    assert replica_options(OCROptions(replicas=4, cuda_graphs=True)).cuda_graphs is True
    assert replica_options(OCROptions(replicas=4, model_server=True)).cuda_graphs is None  # the server's call


def test_replicas_with_a_model_server_read_the_text_one_process_reads(pages) -> None:
    """``model_server=True``: the two replicas' models run in one server process (here on the CPU), which
    fits pages and resizes crops as on a GPU, so the words are those of one process, boxes within a pixel."""
    one = vision.ocr_predictor(device="cpu")
    served = vision.ocr_predictor(device="cpu", replicas=2, model_server=True)
    try:
        got, want = served(pages), one(pages)
        words = [[w.value for w in p.words] for p in got.pages]
        assert words == [[w.value for w in p.words] for p in want.pages] and sum(map(len, words)) >= 10
        for a, b in zip(got.pages, want.pages):
            assert np.allclose([w.geometry for w in a.words], [w.geometry for w in b.words], atol=2 / 640)
    finally:
        served.close()
    assert served.replicas is None


def test_every_interface_maps_onto_the_model_server_option() -> None:
    from vision.app.api.settings import ModelSettings
    from vision.pipelines.ocr.options import OCROptions, options_from_args, options_with

    assert OCROptions().model_server is False and options_with(model_server=True).model_server is True
    assert ModelSettings(device="cpu", model_server=True).ocr_options().model_server is True
    assert ModelSettings(device="cpu").ocr_options().model_server is False
    from vision.app.cli import build_parser

    args = build_parser().parse_args(["ocr", "in", "-o", "out", "--model-server"])
    assert args.model_server is True and options_from_args(args).model_server is True
