"""vision.pipelines"""
