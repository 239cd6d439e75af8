"""vision.ops"""
