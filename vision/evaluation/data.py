"""Readers for the evaluation sets (``../shared/data/<set>``): page sets and crop sets, as typed samples.

Layout (see the data README)::

    <set>/index.json   {"set", "kind": "page" | "crop", "level": "word" | "line", "ids": [...]}
    <set>/images/<id>.png|jpg
    <set>/gt/<id>.json {"id", "image", "width", "height", "level", "source",
                        "words": [{"text", "polygon": [[x, y] x 4] in pixels, "ignore": bool}]}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from vision.errors import CorruptFile, UnsupportedFormat

__all__ = ["GTWord", "PageSample", "CropSample", "EvalSet", "open_set", "read_index", "load_rgb"]


@dataclass(frozen=True)
class GTWord:
    """One ground-truth word (or line, on line-level sets): ``polygon float64[4, 2]`` in pixels."""

    text: str
    polygon: np.ndarray
    ignore: bool = False

    @property
    def box(self) -> np.ndarray:
        """Axis-aligned ``float64[4]`` pixel box around the polygon."""
        return np.concatenate([self.polygon.min(axis=0), self.polygon.max(axis=0)])


@dataclass(frozen=True)
class PageSample:
    """A page with its ground truth; ``level`` is ``"word"`` or ``"line"``."""

    id: str
    image_path: Path
    width: int
    height: int
    level: str
    words: tuple[GTWord, ...]

    def load_image(self) -> np.ndarray:
        """The page as ``uint8[H, W, 3]`` RGB."""
        return load_rgb(self.image_path)


@dataclass(frozen=True)
class CropSample:
    """A word crop and its text."""

    id: str
    image_path: Path
    text: str

    def load_image(self) -> np.ndarray:
        """The crop as ``uint8[H, W, 3]`` RGB."""
        return load_rgb(self.image_path)


def load_rgb(path: Path) -> np.ndarray:
    """Read an image file as ``uint8[H, W, 3]`` RGB (grayscale and RGBA are converted)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))
    except FileNotFoundError:
        raise
    except (UnidentifiedImageError, OSError) as exc:
        raise CorruptFile(str(path), f"unreadable image ({exc})") from exc


def _words(gt: dict) -> tuple[GTWord, ...]:
    return tuple(
        GTWord(
            str(w["text"]),
            np.asarray(w["polygon"], dtype=np.float64).reshape(-1, 2),
            bool(w.get("ignore", False)),
        )
        for w in gt.get("words", [])
    )


@dataclass(frozen=True)
class EvalSet:
    """An evaluation set on disk; iterate it (or index it) for :class:`PageSample` or :class:`CropSample`."""

    root: Path
    name: str
    kind: str
    level: str
    ids: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> PageSample | CropSample:
        sid = self.ids[i]
        try:
            gt = json.loads((self.root / "gt" / f"{sid}.json").read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise CorruptFile(
                str(self.root / "gt" / f"{sid}.json"), f"unreadable ground truth ({exc})"
            ) from exc
        image = self.root / gt["image"]
        if self.kind == "crop":
            words = _words(gt)
            return CropSample(sid, image, " ".join(w.text for w in words if w.text and not w.ignore))
        return PageSample(
            sid, image, int(gt["width"]), int(gt["height"]), gt.get("level", self.level), _words(gt)
        )

    def __iter__(self) -> Iterator[PageSample | CropSample]:
        return (self[i] for i in range(len(self)))


def read_index(root: str | Path) -> dict:
    """The ``index.json`` of the set at ``root``.

    Raises:
        UnsupportedFormat: no ``index.json`` there. CorruptFile: not JSON.
    """
    index = Path(root) / "index.json"
    if not index.is_file():
        raise UnsupportedFormat(str(root), "not an evaluation set (no index.json)")
    try:
        return json.loads(index.read_text())
    except json.JSONDecodeError as exc:
        raise CorruptFile(str(index), f"invalid JSON ({exc})") from exc


def open_set(root: str | Path, *, limit: int | None = None) -> EvalSet:
    """Open the set at ``root`` (the folder holding ``index.json``), keeping the first ``limit`` ids."""
    root = Path(root)
    index = root / "index.json"
    meta = read_index(root)
    kind = meta.get("kind")
    if kind not in ("page", "crop"):
        raise UnsupportedFormat(str(index), f"unknown set kind {kind!r}")
    ids = tuple(meta["ids"][:limit] if limit else meta["ids"])
    return EvalSet(root, str(meta.get("set", root.name)), kind, str(meta.get("level", "word")), ids)
