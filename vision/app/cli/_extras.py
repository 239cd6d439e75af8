"""Name the extra to install when a command needs an optional dependency that is missing."""

from __future__ import annotations

__all__ = ["EXTRAS", "missing_extra_message"]

#: top-level module -> the ``vision-ocr`` extra that installs it
EXTRAS = {
    "fastapi": "serve",
    "uvicorn": "serve",
    "multipart": "serve",
    "python_multipart": "serve",
    "pydantic": "serve",
    "pydantic_settings": "serve",
    "prometheus_client": "serve",
    "httpx": "serve",
    "starlette": "serve",
    "gradio": "ui",
    "ray": "distributed",
    "torchao": "fast",
    "onnxscript": "fast",
    "ocrmypdf": "ocrmypdf",
}


def missing_extra_message(exc: ModuleNotFoundError, command: str | None) -> str | None:
    """``"vision serve needs ..."`` for a module of :data:`EXTRAS`, else ``None`` (a real bug: re-raise)."""
    module = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return None
    what = f"vision {command}" if command else "this command"
    return (
        f"{what} needs the optional dependency {module!r} (extra {extra!r}): "
        f"pip install 'vision-ocr[{extra}]'"
    )
