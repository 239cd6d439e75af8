"""vision.training.synth"""
