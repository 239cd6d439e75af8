"""vision.ops"""

from vision.ops.ctc import CTCPath, ctc_best_path, stitch_frames  # noqa: E402  (recognition decoding)
