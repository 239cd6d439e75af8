"""vision.evaluation"""
