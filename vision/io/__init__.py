"""vision.io"""
