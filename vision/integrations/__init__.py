"""Integrations with other tools: ``ocrmypdf`` (an OCRmyPDF OCR engine plugin)."""
