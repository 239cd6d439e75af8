"""Models: tensors in, tensors out. Find them through the registry."""

from vision.models._registry import Weights, default_model, get_entry, get_model, list_models, register_model

__all__ = ["Weights", "default_model", "get_entry", "get_model", "list_models", "register_model"]
