"""Text recognition predictor: crops in, ``(text, confidence)`` out; width buckets, device resize, lexicon."""
