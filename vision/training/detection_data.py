"""Training and validation data for the text detector: rendered PDF pages and synthetic pages, degraded,
turned into DB targets and cut into crops (in DataLoader workers).

One page goes through: source (PDF page set or :class:`PageRenderer`) -> resize so its long side is
``long_side * 2**U(-0.5, 0.5)`` (the predictor feeds pages at a 1024 long side) -> targets
(:func:`vision.training.losses.db.db_targets`) -> the same homography on image and targets (skew,
perspective, photo on a desk) -> photometric degradation -> ``crops_per_page`` random crops.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from vision.training.losses.db import THRESH_MIN, db_targets
from vision.training.synth.page_degrade import PAGE_PROFILES, degrade_page, page_geometry, warp_page
from vision.training.synth.pdf_pages import WORDS_FILE

__all__ = [
    "DataConfig",
    "DetectionStream",
    "PageSources",
    "PageWords",
    "make_page",
    "prepare_assets",
    "random_crops",
    "scene_validation_pages",
    "validation_pages",
]


@dataclass(frozen=True)
class DataConfig:
    """Where pages come from and how they are cut.

    Attributes:
        fonts_dir, dict_dir: fonts and word lists for synthetic pages.
        pdf_dir: a page set made by :func:`vision.training.synth.pdf_pages.build_page_set` (or ``""``).
        pdf_share: fraction of pages taken from ``pdf_dir``.
        val_pages: the last ``val_pages`` PDF pages are held out for validation.
        crop, crops_per_page: training crop size and crops cut from each generated page.
        long_side: page long side the scale jitter is centred on (the predictor's input size).
        shrink: kernel shrink as a fraction of the word's short side (see db_targets).
        gray_share: fraction of pages turned grey (most scans are).
        photos_dir: a photo folder (:func:`vision.training.synth.photos.prepare_photos`; its ``holdout/``
            is never read) for scene pages.
        scene_share: fraction of pages that are scene pages (:mod:`vision.training.synth.scene_pages`:
            photos with signs and labels, photographed documents, video frames and screens).
        scene_gray_share: fraction of scene pages turned grey.
        scene_large_words: fraction of scene words drawn 90-240 px high (signs read from near: shop fronts,
            exit signs) instead of the usual 7-90 px.
        lone_quantities: share of synthetic receipt item lines led by a quantity standing alone
            (:class:`~vision.training.synth.pages.PageRenderer`); 0 by default, 0.3 in the stage-3 recipe.
        dash_prices: share of synthetic receipt prices written "500. —" (the dash a word of its own); 0 by
            default, 0.3 in the stage-4 recipe.
        separator_rows: share of synthetic receipt rules printed as an unlabelled row of one repeated glyph
            ("*****"); 0 by default.
        layouts: weights of the synthetic page layouts (``{}``: the renderer's defaults, as in stages 1-2).
        letter_spacing: share of synthetic layout lines without lower-case letters (receipt rows, capital
            headings) drawn letter-spaced (:class:`~vision.training.synth.pages.PageRenderer`); 0 by default.
    """

    fonts_dir: str = ".cache/fonts"
    dict_dir: str = ".cache/dict"
    pdf_dir: str = ""
    pdf_share: float = 0.35
    val_pages: int = 40
    crop: int = 640
    crops_per_page: int = 4
    long_side: int = 1024
    shrink: float = 0.25
    gray_share: float = 0.6
    photos_dir: str = ""
    scene_share: float = 0.0
    scene_gray_share: float = 0.15
    scene_large_words: float = 0.0
    lone_quantities: float = 0.0
    dash_prices: float = 0.0
    separator_rows: float = 0.0
    layouts: dict[str, float] = field(default_factory=dict)
    letter_spacing: float = 0.0


class PageWords:
    """Word source for synthetic pages: dictionary words for running text, mixed with the recognition
    sampler's numbers, dates, codes and punctuation (check-box characters are drawn as boxes instead)."""

    def __init__(self, dict_dir: str) -> None:
        from vision.training.synth.corpus import Corpus, TextSampler

        self.corpus = Corpus.from_dir(dict_dir)
        self.sampler = TextSampler(self.corpus)

    def __call__(self, rng: np.random.Generator) -> str:
        if rng.random() < 0.5:
            w = self.corpus.english[int(rng.integers(len(self.corpus.english)))]
            r = rng.random()
            return w.upper() if r < 0.2 else (w.capitalize() if r < 0.45 else w)
        text = self.sampler(rng)
        return text.replace("\u2610", "").replace("\u2611", "") or "x"


class PageSources:
    """Draws ``(image uint8[H, W, 3], boxes float32[N, 4] px)`` pages from PDFs and the synthetic renderer."""

    def __init__(self, cfg: DataConfig, *, validation: bool = False) -> None:
        from vision.training.synth.fonts import discover_fonts
        from vision.training.synth.pages import PageRenderer
        from vision.training.synth.pdf_pages import RenderedPages

        self.cfg = cfg
        self.pdf = None
        if cfg.pdf_dir and Path(cfg.pdf_dir, WORDS_FILE).is_file():
            n = len(RenderedPages(Path(cfg.pdf_dir)).records)
            split = max(n - cfg.val_pages, 0)
            self.pdf = RenderedPages(Path(cfg.pdf_dir), range(split, n) if validation else range(split))
        self.renderer = (
            None if validation else PageRenderer(discover_fonts([cfg.fonts_dir]), PageWords(cfg.dict_dir),
                                                 lone_quantities=cfg.lone_quantities, dash_prices=cfg.dash_prices,
                                                 separator_rows=cfg.separator_rows, layouts=cfg.layouts,
                                                 letter_spacing=cfg.letter_spacing)
        )
        self.scene = None
        if self.renderer is not None and cfg.scene_share > 0:
            from vision.training.synth.photos import PhotoBank
            from vision.training.synth.scene_pages import SceneRenderer

            self.scene = SceneRenderer(self.renderer, PhotoBank(cfg.photos_dir or None), pages=self._pdf_page,
                                       long_side=cfg.long_side, shrink=cfg.shrink,
                                       large_words=cfg.scene_large_words)

    def _pdf_page(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        if self.pdf is None or not len(self.pdf):
            page = self.renderer(rng)
            return page.image, page.boxes
        image, boxes, _ = self.pdf.page(int(rng.integers(len(self.pdf))))
        return image, boxes

    def __call__(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        if (
            self.pdf is not None
            and len(self.pdf)
            and (self.renderer is None or rng.random() < self.cfg.pdf_share)
        ):
            image, boxes, _ = self.pdf.page(int(rng.integers(len(self.pdf))))
            return image, boxes
        page = self.renderer(rng)
        return page.image, page.boxes


def _profile(rng: np.random.Generator) -> str:
    names = list(PAGE_PROFILES)
    p = np.array([PAGE_PROFILES[n] for n in names])
    return names[int(rng.choice(len(names), p=p / p.sum()))]


def make_page(
    image: np.ndarray,
    boxes: np.ndarray,
    rng: np.random.Generator,
    cfg: DataConfig,
    profile: str | None = None,
    scale_jitter: bool = True,
    geometry: bool = True,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Scale, target, warp (unless ``geometry`` is False) and degrade one page.

    Returns ``(uint8[H, W, 3], targets)`` (see db_targets).
    """
    h, w = image.shape[:2]
    long_side = cfg.long_side * (2 ** rng.uniform(-0.5, 0.5) if scale_jitter else 1.0)
    s = long_side / max(h, w)
    image = cv2.resize(
        image,
        (max(1, round(w * s)), max(1, round(h * s))),
        interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR,
    )
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4) * s
    h, w = image.shape[:2]
    t = db_targets(h, w, boxes, shrink=cfg.shrink)
    profile = profile or _profile(rng)
    matrix, out_shape = page_geometry(image.shape, rng, profile) if geometry else (np.eye(3), (h, w))
    if not np.allclose(matrix, np.eye(3)) or out_shape != (h, w):
        image = warp_page(image, matrix, out_shape, rng, photo=profile == "photo")
        size = (out_shape[1], out_shape[0])
        nearest = dict(flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT)
        t = {
            "gt": cv2.warpPerspective(t["gt"], matrix, size, borderValue=0, **nearest),
            "mask": cv2.warpPerspective(t["mask"], matrix, size, borderValue=1, **nearest),
            "thresh": cv2.warpPerspective(
                t["thresh"], matrix, size, flags=cv2.INTER_LINEAR, borderValue=round(THRESH_MIN * 255)
            ),
            "thresh_mask": cv2.warpPerspective(t["thresh_mask"], matrix, size, borderValue=0, **nearest),
        }
    image = degrade_page(image, rng, profile)
    if rng.random() < cfg.gray_share:
        image = np.repeat(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)
    return np.ascontiguousarray(image), t


def random_crops(
    image: np.ndarray, targets: dict[str, np.ndarray], rng: np.random.Generator, size: int, k: int
) -> list[dict[str, np.ndarray]]:
    """``k`` crops of ``size x size`` (padded where the page is smaller), mostly centred near text."""
    h, w = image.shape[:2]
    ys, xs = np.nonzero(targets["gt"][::8, ::8])
    pad_value = tuple(int(v) for v in np.median(image[[0, -1]].reshape(-1, 3), axis=0))
    out = []
    for _ in range(k):
        if len(ys) and rng.random() < 0.8:
            i = int(rng.integers(len(ys)))
            cy, cx = (
                ys[i] * 8 + rng.integers(-size // 3, size // 3 + 1),
                xs[i] * 8 + rng.integers(-size // 3, size // 3 + 1),
            )
        else:
            cy, cx = rng.integers(0, max(h, 1)), rng.integers(0, max(w, 1))
        y0 = int(np.clip(cy - size // 2, 0, max(h - size, 0)))
        x0 = int(np.clip(cx - size // 2, 0, max(w - size, 0)))
        crop = {"image": np.empty((size, size, 3), np.uint8)}
        crop["image"][:] = pad_value
        crop["image"][: min(size, h - y0), : min(size, w - x0)] = image[y0 : y0 + size, x0 : x0 + size]
        for name, fill in (("gt", 0), ("mask", 1), ("thresh", round(THRESH_MIN * 255)), ("thresh_mask", 0)):
            m = np.full((size, size), fill, np.uint8)
            m[: min(size, h - y0), : min(size, w - x0)] = targets[name][y0 : y0 + size, x0 : x0 + size]
            crop[name] = m
        out.append(crop)
    return out


class DetectionStream(IterableDataset):
    """An endless stream of training crops; each worker draws from its own seeded generator, and so does each
    rank of a DDP job (``rank``; rank 0 draws what a single process draws)."""

    def __init__(self, cfg: DataConfig, seed: int, rank: int = 0) -> None:
        super().__init__()
        self.cfg, self.seed, self.rank = cfg, seed, rank

    def __iter__(self) -> Iterator[dict[str, np.ndarray]]:
        info = get_worker_info()
        wid = info.id if info is not None else 0
        rng = np.random.default_rng([self.seed, wid] if self.rank == 0 else [self.seed, wid, self.rank])
        cv2.setNumThreads(1)
        torch.set_num_threads(1)
        sources = PageSources(self.cfg)
        failures = 0
        while True:
            try:
                if sources.scene is not None and rng.random() < self.cfg.scene_share:
                    scene = sources.scene(rng)
                    page, targets = scene.image, scene.targets
                    if rng.random() < self.cfg.scene_gray_share:
                        page = np.repeat(cv2.cvtColor(page, cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)
                else:
                    image, boxes = sources(rng)
                    page, targets = make_page(image, boxes, rng, self.cfg)
                crops = random_crops(page, targets, rng, self.cfg.crop, self.cfg.crops_per_page)
            except Exception as exc:  # one bad random page must not end a 10-minute run
                failures += 1
                if failures > 100:
                    raise
                warnings.warn(f"worker {wid}: skipped a page that failed to generate: {exc!r}")
                continue
            yield from crops


def validation_pages(cfg: DataConfig, seed: int = 1234) -> list[tuple[np.ndarray, np.ndarray]]:
    """Held-out PDF pages, degraded with fixed seeds: ``[(uint8[H, W, 3], boxes float32[N, 4] px)]``.

    Profiles cycle through scan, fax and clean (photometric only: boxes stay exact).
    """
    sources = PageSources(cfg, validation=True)
    if sources.pdf is None:
        return []
    out = []
    for i in range(len(sources.pdf)):
        rng = np.random.default_rng([seed, i])
        image, boxes, _ = sources.pdf.page(i)
        profile = ("scan", "fax", "clean", "scan")[i % 4]
        page, _ = make_page(image, boxes, rng, cfg, profile=profile, scale_jitter=False, geometry=False)
        s = cfg.long_side / max(image.shape[:2])
        out.append((page, np.asarray(boxes, np.float32) * s))
    return out


def scene_validation_pages(
    cfg: DataConfig, pages: int = 150, seed: int = 4321
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Synthetic photos (:mod:`vision.training.synth.scene_pages`), page ``i`` drawn from the seed
    ``[seed, i]`` (training streams are seeded ``[config seed, worker(, rank)]``, config seeds under 100):
    ``[(uint8[H, W, 3], word boxes float32[N, 4] px, ignore boxes float32[K, 4] px)]``, boxes axis-aligned
    around the word quads (as the evaluation scores quads)."""
    sources = PageSources(replace(cfg, scene_share=1.0))
    if sources.scene is None:
        raise ValueError("scene pages need fonts, word lists and photos (fonts_dir, dict_dir, photos_dir)")

    def boxes(quads: np.ndarray) -> np.ndarray:
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        return np.concatenate([q.min(axis=1), q.max(axis=1)], axis=1)

    out = []
    for i in range(pages):
        page = sources.scene(np.random.default_rng([seed, i]))
        out.append((page.image, boxes(page.quads), boxes(page.ignore)))
    return out


def prepare_assets(
    pdf_root: str, fonts_src: str, dict_src: str, out: str, *, pdf_pages: int = 700, seed: int = 7
) -> dict[str, int]:
    """Make the carried training assets under ``out``: ``pdfpages/`` (rendered PDF pages + word boxes),
    ``fonts/`` (subset fonts + coverage) and ``dict/`` (compact word lists). Runs on the dev machine."""
    from vision.training.synth.corpus import prepare_word_lists
    from vision.training.synth.pages import carry_page_fonts
    from vision.training.synth.pdf_pages import build_page_set

    pdfs = sorted(Path(pdf_root).rglob("*.pdf"))
    return {
        "pdf_pages": build_page_set(pdfs, Path(out) / "pdfpages", max_pages=pdf_pages, seed=seed),
        "fonts": carry_page_fonts(fonts_src, Path(out) / "fonts"),
        "words": prepare_word_lists(dict_src, Path(out) / "dict", max_per_list=25000, seed=0),
    }
