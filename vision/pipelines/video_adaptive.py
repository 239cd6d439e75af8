"""Adaptive sampling: more frames reach the OCR while the picture moves, the base rate while it is still.

Frames are probed at the motion rate (``max_fps``). A probe reaches the OCR when it visibly differs from the
last frame that did (the :class:`~vision.pipelines.video_sampling.SceneChange` rule: a pan, zoom, scroll or a
new caption changes many cells), or when ``every`` probes have passed without one (the base rate ``fps``,
so still footage is sampled as by time). With ``floor=False`` (``--scene-change``) still footage gets no
base-rate frames: only changes reach the OCR.

Why the rule compares with the last OCR'd frame: slow motion adds up until it crosses the threshold, so a
slow pan is sampled as often as it needs (each kept frame moved ~one caption letter or more), a fast one at
the motion rate.
"""

from __future__ import annotations

import numpy as np

from vision.pipelines.video_sampling import SceneChange

__all__ = ["AdaptiveRule"]


class AdaptiveRule:
    """``rule(image) -> bool``: whether a probed frame reaches the OCR (see the module docstring).

    Args:
        every: probes per base-rate frame (``max_fps / fps``, rounded); 1 keeps every probe.
        scene: the change rule (its reference becomes each kept frame).
        floor: keep a frame every ``every`` probes even when nothing changed.
    """

    def __init__(self, every: int, scene: SceneChange | None = None, floor: bool = True) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.every, self.scene, self.floor = every, scene or SceneChange(), floor
        self._since = 0

    def __call__(self, image: np.ndarray) -> bool:
        self._since += 1
        if self.scene(image) or (self.floor and self._since >= self.every):
            self.scene.accept(image)
            self._since = 0
            return True
        return False
