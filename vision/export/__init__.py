"""Exporters of :class:`vision.structures.Document`, one small module per format.

``json`` (versioned dict, lossless), ``text`` (reading order), ``hocr`` (XHTML), ``alto`` (ALTO v4),
``pdf`` (searchable PDF) and ``subtitles`` (SRT / WebVTT). ``Document`` methods delegate here; see
docs/formats.md.
"""
