"""Text detection: DBNet-style models (``dbnet``), their predictor (``predictor.detection_predictor``), fast
paths (``fast``) and shipped weight records (``_weights``). Find models through
``vision.models.list_models``."""
