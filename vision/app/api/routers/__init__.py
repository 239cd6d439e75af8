"""One router per capability: ocr, jobs, segment, health."""
