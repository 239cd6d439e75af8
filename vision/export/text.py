"""Plain-text rendering in reading order: the order the pipeline stored blocks, lines and words in."""

from __future__ import annotations

from vision.structures.document import Document, Page

__all__ = ["PAGE_SEPARATOR", "render_page", "render_document"]

#: Between pages: a line holding only a form feed, which pagers and ``pr`` treat as a page break.
PAGE_SEPARATOR = "\n\f\n"


def render_page(page: Page) -> str:
    """Lines joined by newlines and blocks by a blank line; blocks without text are skipped."""
    blocks = (block.render() for block in page.blocks)
    return "\n\n".join(text for text in blocks if text.strip())


def render_document(doc: Document) -> str:
    """Every page rendered with :func:`render_page`, pages separated by :data:`PAGE_SEPARATOR`."""
    return PAGE_SEPARATOR.join(render_page(page) for page in doc.pages)
