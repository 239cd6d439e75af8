"""The CPU-only layout of the Ray OCR engine on a local Ray instance: documents in blocks of at most
``pages_per_batch``, each actor call reading one block with the real predictor, every document finished on the
driver as the predictor reads it alone. (That results then reach the driver block by block, not held back
until a task of several blocks ends, is timed by ``benchmarks/ray_cpu.py``: first file.)"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from _ocr_stages import render_page
from PIL import Image

import vision
from vision.pipelines.ocr.bulk import read_path
from vision.pipelines.ocr.ray_engine import run_ray


class CountingPredictor:
    """The default CPU predictor, appending the number of documents of every ``map`` call to ``log``."""

    def __init__(self, log: str) -> None:
        self.log, self.predictor = log, vision.ocr_predictor(device="cpu")

    def map(self, items, **kwargs):
        with open(self.log, "a") as f:
            f.write(f"{len(items)}\n")
        return self.predictor.map(items, **kwargs)


def test_actor_calls_hold_at_most_a_batch_of_documents(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the actor builds it from this module
    image = Image.fromarray(render_page()[0])
    items = []
    for k in range(7):
        image.save(tmp_path / f"p{k}.png")
        items.append(str(tmp_path / f"p{k}.png"))
    log, done = tmp_path / "calls.txt", {}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = list(run_ray(items, read=read_path, factory=lambda: CountingPredictor(str(log)),
                               finish=lambda item, doc: done.setdefault(item, doc), pages_per_batch=3,
                               progress=False))
    finally:
        ray.shutdown()
    assert [error for _, error in results] == [None] * 7 and sorted(done) == sorted(items)
    calls = [int(n) for n in log.read_text().split()]
    assert sum(calls) == 7 and max(calls) <= 3  # blocks of 3, 2 and 2 documents
    reference = vision.ocr_predictor(device="cpu")([np.asarray(image)])
    assert all([w.value for w in d.pages[0].words] == [w.value for w in reference.pages[0].words] for d in done.values())
