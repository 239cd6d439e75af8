"""``lang`` on the service (form or query field) and the CLI (``-l/--lang``)."""

from __future__ import annotations

from typing import Any

import _app_media as _media
from fastapi.testclient import TestClient

from vision.io import DocumentFile


def test_lang_field_reads_with_that_language(client: TestClient, predictor: Any) -> None:
    data = _media.png(["Größe und Straße", "Total 42.00"])
    pages = list(DocumentFile.from_path(data))
    for page in pages:
        page.source = "page.png"
    expected = predictor.with_lang("de+fr")(pages)
    expected.source = "page.png"
    for kwargs in ({"data": {"lang": "de+fr"}}, {"params": {"lang": "fr+de"}}):
        response = client.post("/v1/ocr", files={"file": ("page.png", data)}, **kwargs)
        assert response.status_code == 200, response.text
        assert response.json() == expected.export()


def test_unknown_or_unread_languages_are_refused(client: TestClient) -> None:
    data = _media.png(["Total 42.00"])
    for lang, words in (("xx", "unknown lang"), ("ru", "Cyrillic")):
        response = client.post("/v1/ocr", files={"file": ("page.png", data)}, data={"lang": lang})
        assert response.status_code == 422
        body = response.json()
        assert body["error"] == "invalid_lang" and words in body["message"]


def test_predictor_with_lang_shares_the_models(predictor: Any) -> None:
    de = predictor.with_lang("de")
    assert de.options.lang == "de" and predictor.with_lang(None) is predictor
    assert de.pipeline["recognize"].predictor.model is predictor.pipeline["recognize"].predictor.model
    assert "größe" in de.pipeline["recognize"].predictor.lexicon.words


def test_cli_lang_option(tmp_path, capsys) -> None:
    from vision.app.cli import main

    image = tmp_path / "page.png"
    image.write_bytes(_media.png(["Total 42.00"]))
    assert main(["ocr", str(image), "--lang", "xx", "--det-weights", "none", "--reco-weights", "none"]) == 2
    assert "unknown lang" in capsys.readouterr().err
