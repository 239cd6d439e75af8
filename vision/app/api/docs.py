"""API documentation served from the package, never from a CDN: Swagger UI at ``/docs``, ReDoc at ``/redoc``
(their JavaScript and CSS come from the ``fastapi-offline`` package and are served as static files under
``/docs/static``), ``/`` redirecting to ``/docs``, and the JSON Schema of the result document at
``/v1/schema/document.json``."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from vision.app.api.schemas import DocumentOut

__all__ = ["STATIC", "document_schema", "install_docs"]

STATIC = "/docs/static"


def document_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12, from the Pydantic model) of the document ``POST /v1/ocr`` returns."""
    schema = DocumentOut.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema.setdefault("$id", "/v1/schema/document.json")
    return schema


def install_docs(app: FastAPI) -> None:
    """Add the documentation routes to ``app`` (built with ``docs_url=None, redoc_url=None``)."""
    assets = files("fastapi_offline") / "static"
    app.mount(STATIC, StaticFiles(directory=str(assets)), name="docs-static")
    title = app.title

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/docs")

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{title} - Swagger UI",
            oauth2_redirect_url="/docs/oauth2-redirect",
            swagger_js_url=f"{STATIC}/swagger-ui-bundle.js",
            swagger_css_url=f"{STATIC}/swagger-ui.css",
            swagger_favicon_url=f"{STATIC}/favicon.png",
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{title} - ReDoc",
            redoc_js_url=f"{STATIC}/redoc.standalone.js",
            redoc_favicon_url=f"{STATIC}/favicon.png",
            with_google_fonts=False,
        )

    @app.get("/v1/schema/document.json", tags=["ocr"], summary="JSON Schema of the OCR result document")
    def schema() -> dict[str, Any]:
        return document_schema()
