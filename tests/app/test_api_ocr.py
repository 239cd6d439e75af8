"""POST /v1/ocr: results equal the library's, every format, and exact bodies for every limit and bad input."""

from __future__ import annotations

import threading
from typing import Any

import _app_media as _media
import pypdfium2
import pytest
from fastapi.testclient import TestClient

from vision.app.api.dependencies import get_ocr
from vision.app.api.runtime import OcrService
from vision.errors import VisionError
from vision.io import DocumentFile
from vision.settings import DEFAULT_LIMITS
from vision.structures import Document


def library_doc(predictor: Any, data: bytes, filename: str, **read: Any) -> Document:
    """What the library itself returns for ``data``, named like the upload (the API must return this)."""
    pages = list(DocumentFile.from_path(data, **read))
    for page in pages:
        page.source = filename
    doc = predictor(pages)
    doc.source = filename
    return doc


def expected(predictor: Any, data: bytes, filename: str, **read: Any) -> dict:
    return library_doc(predictor, data, filename, **read).export()


def reader_error(data: bytes, filename: str, **read: Any) -> str:
    """The message the API must relay for a reader failure: the reader's reason, naming the upload."""
    with pytest.raises(VisionError) as info:
        list(DocumentFile.from_path(data, **read))
    return f"{filename}: {info.value.reason}"


def post(
    client: TestClient,
    data: bytes,
    filename: str = "page.png",
    params: dict | None = None,
    form: dict | None = None,
    headers: dict | None = None,
):
    return client.post("/v1/ocr", files={"file": (filename, data)}, params=params, data=form, headers=headers)


def test_image_json_is_exactly_the_predictor_output(client: TestClient, predictor: Any) -> None:
    data = _media.png(["Invoice 2024", "Total 42.00"])
    response = post(client, data)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == expected(predictor, data, "page.png")


def test_born_digital_pdf_reads_its_text_layer(client: TestClient, predictor: Any) -> None:
    data = _media.digital_pdf([["Hello world", "second line"], ["Page two"]])
    body = post(client, data, "letter.pdf").json()
    assert body == expected(predictor, data, "letter.pdf")
    words = [
        [w["value"] for b in p["blocks"] for ln in b["lines"] for w in ln["words"]] for p in body["pages"]
    ]
    assert words == [["Hello", "world", "second", "line"], ["Page", "two"]]
    assert [p["page_idx"] for p in body["pages"]] == [0, 1]


@pytest.mark.parametrize(
    ("fmt", "media_type", "method", "suffix"),
    [
        ("txt", "text/plain; charset=utf-8", "render", ".txt"),
        ("hocr", "application/xhtml+xml", "export_hocr", ".hocr.html"),
        ("alto", "application/xml", "export_alto", ".alto.xml"),
        ("md", "text/markdown; charset=utf-8", "export_markdown", ".md"),
        ("html", "text/html; charset=utf-8", "export_html", ".html"),
    ],
)
def test_text_formats_by_query_and_by_form(
    client: TestClient, predictor: Any, fmt: str, media_type: str, method: str, suffix: str
) -> None:
    data = _media.digital_pdf([["Hello world"]])
    doc = library_doc(predictor, data, "a b.pdf")
    for response in (
        post(client, data, "a b.pdf", params={"format": fmt}),
        post(client, data, "a b.pdf", form={"format": fmt}),
    ):
        assert response.status_code == 200
        assert response.headers["content-type"] == media_type
        assert response.headers["content-disposition"] == f'inline; filename="a_b{suffix}"'
        # the same bytes as the CLI writes: a text file ends with a newline
        assert response.text == getattr(doc, method)() + ("\n" if fmt == "txt" else "")


def test_searchable_pdf_carries_the_words(client: TestClient) -> None:
    response = post(client, _media.digital_pdf([["Hello world"]]), "in.pdf", params={"format": "pdf"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/pdf"
    pdf = pypdfium2.PdfDocument(response.content)
    try:
        assert "Hello" in pdf[0].get_textpage().get_text_range() and len(pdf) == 1
    finally:
        pdf.close()


def test_query_wins_over_form_and_pages_select(client: TestClient, predictor: Any) -> None:
    data = _media.digital_pdf([["one"], ["two"], ["three"]])
    response = post(
        client, data, "d.pdf", params={"format": "txt", "pages": "2-3"}, form={"format": "hocr", "pages": "1"}
    )
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == library_doc(predictor, data, "d.pdf", pages=[1, 2]).render() + "\n"
    body = post(client, data, "d.pdf", form={"pages": "3,1"}).json()
    assert body == expected(predictor, data, "d.pdf", pages=[2, 0])


@pytest.mark.parametrize("spec", ["0", "3-1", "two", "1-", "-2"])
def test_bad_page_selections(client: TestClient, spec: str) -> None:
    response = post(client, _media.digital_pdf([["x"]]), "d.pdf", params={"pages": spec})
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid_pages",
        "message": f"pages: {spec.strip()!r} is not a page or range like 2 or 1-3",
    }


def test_validation_errors_have_the_json_error_body(client: TestClient) -> None:
    missing = client.post("/v1/ocr", data={"format": "txt"})
    assert missing.status_code == 422
    assert missing.json() == {
        "error": "invalid_request",
        "message": "body.file: Field required",
        "detail": [{"loc": ["body", "file"], "msg": "Field required", "type": "missing"}],
    }
    bad_format = post(client, b"x", params={"format": "docx"})
    assert bad_format.status_code == 422
    body = bad_format.json()
    assert (body["error"], body["message"]) == (
        "invalid_request",
        "query.format: Input should be 'json', 'txt', 'hocr', 'alto', 'md', 'html', 'pdf' or 'tsv'",
    )
    assert [d["loc"] for d in body["detail"]] == [["query", "format"]]
    bad_dpi = post(client, b"x", params={"dpi": "5000"})
    assert bad_dpi.status_code == 422
    assert bad_dpi.json()["message"] == "query.dpi: Input should be less than or equal to 600"


@pytest.mark.parametrize(
    ("name", "data", "status", "code"),
    [
        ("empty.png", b"", 422, "corrupt_file"),
        ("noise.png", bytes(range(256)) * 8, 415, "unsupported_format"),
        ("cut.png", _media.png(["truncated"])[:300], 422, "corrupt_file"),
        ("cut.pdf", _media.digital_pdf([["x"]])[:200], 422, "corrupt_file"),
        ("song.mp3", b"ID3" + bytes(500), 415, "unsupported_format"),
    ],
)
def test_bad_files(client: TestClient, name: str, data: bytes, status: int, code: str) -> None:
    response = post(client, data, name)
    assert response.status_code == status
    assert response.json() == {"error": code, "message": reader_error(data, name)}


def test_encrypted_pdf_needs_its_password(client: TestClient, predictor: Any) -> None:
    data = _media.digital_pdf([["secret words"]], password="pw")
    response = post(client, data, "locked.pdf")
    assert response.status_code == 422
    assert response.json() == {"error": "password_required", "message": reader_error(data, "locked.pdf")}
    wrong = post(client, data, "locked.pdf", form={"password": "nope"})
    assert wrong.status_code == 422 and wrong.json()["error"] == "password_required"
    opened = post(client, data, "locked.pdf", form={"password": "pw"})
    assert opened.status_code == 200
    assert opened.json() == expected(predictor, data, "locked.pdf", password="pw")


def test_videos_are_sent_to_jobs(client: TestClient) -> None:
    response = post(client, _media.video(seconds=1.0), "clip.mp4")
    assert response.status_code == 422
    assert response.json() == {
        "error": "use_jobs",
        "message": "clip.mp4: videos are processed as jobs: POST /v1/jobs",
    }


def test_byte_limit(make_client: Any) -> None:
    data = _media.png(["too big"])
    with make_client(limits={"max_bytes": 1000}) as client:
        response = post(client, data, "big.png")
        assert response.status_code == 413
        assert response.json() == {
            "error": "limit_exceeded",
            "message": f"big.png: {len(data)} bytes is over the limit of 1000 bytes (max_bytes)",
        }
        limit = 1000 + (1 << 20)
        huge = post(client, bytes(limit + 1), "huge.png")  # refused on its Content-Length, body unread
        assert huge.status_code == 413
        assert huge.json() == {
            "error": "limit_exceeded",
            "message": f"request body is over the limit of {limit} bytes (max_bytes plus form overhead)",
        }


def test_byte_limit_without_content_length(make_client: Any) -> None:
    boundary = "vision-test-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="s.png"\r\n'
            f"Content-Type: image/png\r\n\r\n"
        ).encode()
        + bytes(3 << 20)
        + f"\r\n--{boundary}--\r\n".encode()
    )
    chunks = (body[i : i + 65536] for i in range(0, len(body), 65536))  # a generator: sent chunked
    with make_client(limits={"max_bytes": 1000}) as client:
        response = client.post(
            "/v1/ocr", content=chunks, headers={"content-type": f"multipart/form-data; boundary={boundary}"}
        )
    assert response.status_code == 413
    assert response.json() == {
        "error": "limit_exceeded",
        "message": f"request body is over the limit of "
        f"{1000 + (1 << 20)} bytes (max_bytes plus form overhead)",
    }


def test_pixel_and_page_limits(make_client: Any) -> None:
    image = _media.png(["pixels"], size=(1200, 1800))  # 2.16 MP
    pdf = _media.digital_pdf([["a"], ["b"], ["c"]])  # letter pages: 1.94 MP at the default 144 dpi
    with make_client(limits={"max_pixels": 2_000_000, "max_pages": 2}) as client:
        big = post(client, image, "wide.png")
        assert big.status_code == 413
        limits = DEFAULT_LIMITS.replace(max_pixels=2_000_000, max_pages=2)
        assert big.json() == {
            "error": "limit_exceeded",
            "message": reader_error(image, "wide.png", limits=limits),
        }
        many = post(client, pdf, "long.pdf")
        assert many.status_code == 413
        assert many.json() == {
            "error": "limit_exceeded",
            "message": reader_error(pdf, "long.pdf", limits=limits),
        }
        assert post(client, pdf, "long.pdf", params={"pages": "1-2"}).status_code == 200


class Gate:
    """The real predictor, held until ``open`` is set: lets a test keep the model busy."""

    def __init__(self, predictor: Any) -> None:
        self.predictor, self.open, self.entered = predictor, threading.Event(), threading.Event()

    def __call__(self, pages: list) -> Any:
        self.entered.set()
        assert self.open.wait(20)
        return self.predictor(pages)


def test_request_timeout_and_overload(make_client: Any, predictor: Any) -> None:
    gate = Gate(predictor)
    service = OcrService(gate, max_batch_size=1, max_wait_s=0.0, max_queue=1)
    data = _media.png(["slow"])
    try:
        with make_client(limits={"request_timeout_s": 0.5}) as client:
            client.app.dependency_overrides[get_ocr] = lambda: service
            results: dict[str, Any] = {}
            first = threading.Thread(target=lambda: results.setdefault("running", post(client, data)))
            first.start()
            assert gate.entered.wait(10)  # the first request holds the model
            queued = post(client, data)  # waits in the queue past the timeout
            first.join(10)
            gate.open.set()
    finally:
        service.close()
    assert queued.status_code == 503 and queued.headers["retry-after"] == "1"
    assert queued.json() == {
        "error": "overloaded",
        "message": "the server is busy (still queued after 0.5 s); retry later",
    }
    running = results["running"]
    assert running.status_code == 413
    assert running.json() == {
        "error": "request_timeout",
        "message": "processing took longer than the 0.5 s request "
        "limit; submit large documents to POST /v1/jobs",
    }


def test_api_key(make_client: Any) -> None:
    data = _media.digital_pdf([["key"]])
    with make_client(api_key="s3cret") as client:
        for headers in (None, {"X-API-Key": "wrong"}):
            response = post(client, data, "k.pdf", headers=headers)
            assert response.status_code == 401
            assert response.json() == {
                "error": "unauthorized",
                "message": "missing or invalid X-API-Key header",
            }
        assert post(client, data, "k.pdf", headers={"X-API-Key": "s3cret"}).status_code == 200
        assert client.get("/v1/jobs/" + "0" * 32).status_code == 401
        assert client.get("/healthz").status_code == 200  # probes stay open
