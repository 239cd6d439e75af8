"""Fixtures of the hostile-input suite: the stub predictor and an app factory (helpers in _hostile.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _hostile import StubPredictor, settings
from fastapi.testclient import TestClient

from vision.app.api import create_app


@pytest.fixture
def stub() -> StubPredictor:
    return StubPredictor()


@pytest.fixture
def make_client(
    tmp_path: Path, stub: StubPredictor
) -> Callable[..., contextlib.AbstractContextManager[TestClient]]:
    """``with make_client(api_key=..., limits={...}) as client:`` runs an app on the stub predictor."""

    @contextlib.contextmanager
    def factory(**overrides: Any) -> Iterator[TestClient]:
        app = create_app(settings(tmp_path, **overrides), predictor=stub)
        try:
            with TestClient(app) as client:
                yield client
        finally:
            stub.release()

    return factory
