"""REST habits: docs served from the package (no CDN), ``/`` redirecting to them, a published JSON Schema of
the result, a per-request ``pdf_text``, and ``format=pdf`` written onto the uploaded original."""

from __future__ import annotations

import io
import re
from typing import Any

import _app_media as _media
import jsonschema
import pikepdf
import pypdfium2 as pdfium
from fastapi.testclient import TestClient


def _post(client: TestClient, data: bytes, filename: str, **params: Any):
    return client.post("/v1/ocr", files={"file": (filename, data)}, params=params)


def _words(body: dict) -> list[list[tuple[str, float]]]:
    return [
        [(w["value"], w["confidence"]) for b in p["blocks"] for ln in b["lines"] for w in ln["words"]]
        for p in body["pages"]
    ]


def test_docs_and_redoc_load_their_assets_from_this_server(client: TestClient) -> None:
    for path in ("/docs", "/redoc"):
        page = client.get(path)
        assert page.status_code == 200
        sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sources and all(s.startswith("/") for s in sources), sources  # nothing from another host
        for source in sources:
            asset = client.get(source)
            assert asset.status_code == 200 and len(asset.content) > 1000, source
    assert "https://" not in client.get("/redoc").text.split("<body>")[0].replace("https://json-schema", "")
    root = client.get("/", follow_redirects=False)
    assert root.status_code in (302, 307) and root.headers["location"] == "/docs"


def test_the_published_schema_validates_real_results(client: TestClient) -> None:
    schema = client.get("/v1/schema/document.json").json()
    jsonschema.Draft202012Validator.check_schema(schema)
    for data, name in (
        (_media.png(["Invoice 2024"]), "a.png"),
        (_media.digital_pdf([["Hello world"]]), "b.pdf"),
    ):
        jsonschema.validate(_post(client, data, name).json(), schema)
    assert not jsonschema.Draft202012Validator(schema).is_valid({"pages": "nope"})


def test_pdf_text_is_a_per_request_option(client: TestClient) -> None:
    data = _media.digital_pdf([["Hello world"]])
    layer = _words(_post(client, data, "d.pdf", pdf_text="layer").json())
    assert layer == [[("Hello", 1.0), ("world", 1.0)]]
    ocr = _words(_post(client, data, "d.pdf", pdf_text="ocr").json())
    assert ocr != layer  # the (random-weight) models read it instead of the text layer
    scan = _post(client, _media.scanned_pdf(2), "s.pdf", pdf_text="layer").json()
    assert _words(scan) == [[], []] and [p["page_idx"] for p in scan["pages"]] == [0, 1]
    assert _post(client, data, "d.pdf", pdf_text="sometimes").status_code == 422


def test_pdf_output_is_the_upload_with_a_text_layer(client: TestClient) -> None:
    scan = _media.scanned_pdf(2)
    response = _post(client, scan, "scan.pdf", format="pdf")
    assert response.status_code == 200 and response.headers["content-type"] == "application/pdf"
    with pikepdf.open(io.BytesIO(scan)) as before, pikepdf.open(io.BytesIO(response.content)) as after:
        images = [[bytes(i.read_raw_bytes()) for i in p.get_images().values()] for p in before.pages]
        assert images == [[bytes(i.read_raw_bytes()) for i in p.get_images().values()] for p in after.pages]
    digital = _media.digital_pdf([["Hello world"]])
    kept = _post(client, digital, "d.pdf", format="pdf").content
    document = pdfium.PdfDocument(kept)
    assert document[0].get_textpage().get_text_range().split() == ["Hello", "world"]  # unchanged, not doubled
    document.close()
