"""Readers for images, PDFs and videos; every reader yields :class:`PageImage` (RGB uint8 ``(H, W, 3)``).

from vision.io import DocumentFile

for page in DocumentFile.from_path("scan.pdf", dpi=200):
    page.image, page.index, page.text_layer
"""

from vision.io.document import DocumentFile
from vision.io.page import PageImage, TextLayerWord
from vision.io.sniff import sniff_format

__all__ = ["DocumentFile", "PageImage", "TextLayerWord", "sniff_format"]
