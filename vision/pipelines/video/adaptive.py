"""Adaptive sampling: more frames reach the OCR while the picture moves, the base rate while it is still.

Frames are probed at the motion rate (``max_fps``); every ``every``-th probe lies on the base grid (``fps``).

* A probe on the base grid reaches the OCR (still footage is sampled exactly as by time at ``fps``).
* A probe between grid points reaches the OCR when the picture **moved** since the last OCR'd frame: at least
  ``motion_share`` of the :class:`~vision.pipelines.video.sampling.SceneChange` cells changed (5%: a pan, zoom
  or scroll changes every cell with text in it, while a caption appearing changes a few rows of cells: a
  20-letter caption is ~40 of the 2,304 cells of a 16:9 frame, 1.7%).
* With ``floor=False`` (``--scene-change``) no probe is kept for being on the grid: only changes (the
  :class:`SceneChange` rule, ``min_cells`` cells) reach the OCR.

Comparing with the last OCR'd frame lets slow motion add up until it crosses the threshold: a slow pan is
sampled as often as it needs, a fast one at the motion rate. Frames keep their probe position as
``page_idx``; the timeline counts its rules in probes, so :meth:`VideoOptions.merge_rules
<vision.pipelines.video.VideoOptions.merge_rules>` scales ``min_frames`` and ``max_gap`` by ``every``
(still text needs two base intervals on screen, as without adaptive sampling).
"""

from __future__ import annotations

import numpy as np

from vision.pipelines.video.sampling import SceneChange

__all__ = ["AdaptiveRule"]

MOTION_SHARE = 0.05


class AdaptiveRule:
    """``rule(image) -> bool``: whether a probed frame reaches the OCR (see the module docstring).

    Args:
        every: probes per base-grid frame (``max_fps / fps``, rounded); 1 keeps every probe.
        scene: the change rule (its reference becomes each kept frame).
        floor: keep the base-grid probes even when nothing changed.
        motion_share: share of changed cells that makes an off-grid probe a moving picture.
    """

    def __init__(
        self,
        every: int,
        scene: SceneChange | None = None,
        floor: bool = True,
        motion_share: float = MOTION_SHARE,
    ) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.every, self.scene, self.floor, self.motion_share = (
            every,
            scene or SceneChange(),
            floor,
            motion_share,
        )
        self._probe = -1

    def grid_frames(self, probes: int) -> int | None:
        """Base-grid frames among ``probes`` probes (``None`` without the floor: not known in advance)."""
        return -(-probes // self.every) if self.floor else None

    def __call__(self, image: np.ndarray) -> bool:
        self._probe += 1
        if self.floor and self._probe % self.every == 0:
            keep = True
        elif self.floor:
            keep = self.scene.changed_share(image) >= self.motion_share
        else:
            keep = self.scene(image)
        if keep:
            self.scene.accept(image)
        return keep
