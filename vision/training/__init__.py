"""vision.training"""
