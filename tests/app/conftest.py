"""Fixtures of the service tests: one small random-weight OCR predictor shared by every app, app factories."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import vision
from vision.app.api import create_app
from vision.app.api.security import LOCAL_HOSTS
from vision.app.api.settings import ServiceSettings

RANDOM_MODELS = {"det_weights": "random", "reco_weights": "random"}


SMALL_SHAPES = ((256, 256), (256, 192), (192, 256), (256, 128), (128, 256))


@pytest.fixture(scope="session")
def predictor() -> Any:
    """Random weights and small detector inputs: fast, and deterministic (tests compare the API with it)."""
    import torch

    from vision.predictors.detection.predictor import detection_predictor

    torch.manual_seed(0)
    det = detection_predictor(weights=None, device="cpu")
    det.shapes = SMALL_SHAPES  # pages are fitted to 256 px instead of 1024: 16x less work per page
    return vision.ocr_predictor(det_predictor=det, reco_weights=None, device="cpu")


def service_settings(tmp_path: Path, **overrides: Any) -> ServiceSettings:
    """Settings for a test app: jobs under ``tmp_path``, random models, no UI unless asked."""
    base: dict[str, Any] = {
        "jobs": {"dir": tmp_path / "jobs", "chunk_pages": 1},
        "ui": False,
        "models": RANDOM_MODELS,
        "batching": {"max_wait_ms": 0},
        "allowed_hosts": ["testserver", *LOCAL_HOSTS],  # TestClient's Host, and real servers on loopback
    }
    for key, value in overrides.items():
        base[key] = (
            {**base[key], **value} if isinstance(value, dict) and isinstance(base.get(key), dict) else value
        )
    return ServiceSettings(**base)


AppFactory = Callable[..., contextlib.AbstractContextManager[TestClient]]


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """One intra-op thread while a test serves requests (restored after): the batcher thread, request threads
    and the test share two cores, and spinning OpenMP workers made model calls 7x slower on a busy machine."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def make_client(tmp_path: Path, predictor: Any, one_torch_thread: None) -> AppFactory:
    """``with make_client(limits={...}) as client:`` runs an app (lifespan included) on the shared predictor
    (or on ``serve=`` another predictor-like callable)."""

    @contextlib.contextmanager
    def factory(serve: Any = None, **overrides: Any) -> Iterator[TestClient]:
        app = create_app(service_settings(tmp_path, **overrides), predictor=serve or predictor)
        with TestClient(app) as client:
            yield client

    return factory


@pytest.fixture
def client(make_client: AppFactory) -> Iterator[TestClient]:
    with make_client() as c:
        yield c
