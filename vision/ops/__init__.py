"""vision.ops"""

from vision.ops.ctc import CTCPath as CTCPath  # recognition decoding
from vision.ops.ctc import ctc_best_path as ctc_best_path
from vision.ops.ctc import stitch_frames as stitch_frames
