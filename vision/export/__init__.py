"""vision.export"""
