"""Text detection predictor: pages in, word boxes and polygons out."""
