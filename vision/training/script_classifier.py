"""Train the script classifier (:mod:`vision.models.recognition.script`) on synthetic word crops, on the CPU.

``python -m vision.training.script_classifier --fonts DIR... --words DIR --out weights.safetensors``

Each sample is one to three words in one script: Latin words from the word lists (accents included; numbers
and codes count as Latin, since every recognizer reads them), random letter strings for the other scripts,
shaped by Pillow's Raqm layout (Arabic joins, Devanagari conjuncts), drawn in a font that covers them
(DejaVu, FreeFont, Liberation and Noto for Cyrillic and Greek; Noto for Arabic, Hebrew, Devanagari, Thai,
Armenian, Georgian; WenQuanYi Micro Hei for Chinese, Japanese kana and Hangul), degraded like the word
generator's crops (scan, photo, fax profiles; coloured and inverted grounds).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFont

from vision.models.recognition.script import SCRIPTS, ScriptCNN
from vision.predictors.recognition.script import prepare
from vision.training.synth import degrade as D

__all__ = ["ALPHABETS", "render_sample", "train"]


def _r(a: int, b: int) -> str:
    return "".join(chr(c) for c in range(a, b + 1))


ALPHABETS = {
    # cased scripts: lower case here, words get a case pattern in _text (mixed-case strings look like nothing)
    "Cyrillic": "абвгдеёжзийклмнопрстуфхцчшщъыьэюя" * 3 + "іїєґўјљњћџђ",
    "Greek": "αβγδεζηθικλμνξοπρστυφχψω" * 3 + "άέήίόύώϊϋ",
    "Arabic": _r(0x0621, 0x064A),
    "Hebrew": _r(0x05D0, 0x05EA),
    "CJK": _r(0x4E00, 0x4FFF) + _r(0x5000, 0x5FFF)[::3] + _r(0x3041, 0x3096) + _r(0x30A1, 0x30FA)
    + _r(0xAC00, 0xD7A3)[::40],
    "Devanagari": _r(0x0905, 0x0939) + _r(0x093E, 0x094C) * 2,
    "Thai": _r(0x0E01, 0x0E2E) + _r(0x0E30, 0x0E39),
    "Armenian": _r(0x0561, 0x0586),
    "Georgian": _r(0x10D0, 0x10FA),
}
_FONT_HINTS = {
    "Latin": ("",), "Cyrillic": ("DejaVu", "Free", "Liberation", "NotoSans-", "NotoSerif-", "NotoSansMono"),
    "Greek": ("DejaVu", "Free", "Liberation", "NotoSans-", "NotoSerif-"),
    "Arabic": ("Arabic", "DejaVuSans."), "Hebrew": ("Hebrew", "FreeSans", "FreeSerif", "DejaVuSans."),
    "CJK": ("wqy",), "Devanagari": ("Devanagari",), "Thai": ("Thai",), "Armenian": ("Armenian", "DejaVuSans."),
    "Georgian": ("Georgian", "DejaVuSans."),
}


def _fonts(dirs: list[str]) -> dict[str, list[str]]:
    """Font files per script: those whose name matches a hint and that draw the script's letters."""
    from vision.training.synth.fonts import font_covers

    files = sorted(str(p) for d in dirs for p in Path(d).rglob("*") if p.suffix.lower() in (".ttf", ".otf", ".ttc"))
    out: dict[str, list[str]] = {}
    for script in SCRIPTS:
        probe = ALPHABETS.get(script, "abcdefghijklmnopqrstuvwxyz")[:20]
        probe += probe.upper() if script in ("Cyrillic", "Greek", "Armenian") else ""
        hits = [f for f in files if any(h in Path(f).name for h in _FONT_HINTS[script])]
        out[script] = [f for f in hits if len(font_covers(f, probe)) >= 0.9 * len(probe)]
    return out


def _text(script: str, rng: np.random.Generator, latin_words: list[str]) -> str:
    words = []
    for _ in range(int(rng.integers(1, 4))):
        if script == "Latin":
            r = rng.random()
            words.append(latin_words[int(rng.integers(len(latin_words)))] if r < 0.8
                         else str(int(rng.integers(0, 10 ** int(rng.integers(1, 7))))))
        else:
            alphabet = ALPHABETS[script]
            n = int(rng.integers(1, 4) if script == "CJK" else rng.integers(2, 11))
            word = "".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), n))
            if script == "Greek" and word.endswith("σ"):
                word = word[:-1] + "ς"
            if script in ("Cyrillic", "Greek", "Armenian"):
                r = rng.random()
                word = word.upper() if r < 0.15 else word[:1].upper() + word[1:] if r < 0.45 else word
            words.append(word)
    if script != "Latin" and rng.random() < 0.1:
        words.append(str(int(rng.integers(1, 2000))))  # numbers inside foreign text
    return " ".join(words)


@lru_cache(maxsize=512)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)  # loading a face costs more than drawing a word (a 5 MB CJK file)


def render_sample(args: tuple[int, int, dict[str, list[str]], list[str]]) -> tuple[np.ndarray, int]:
    """One ``(32 x WIDTH float32, class)`` sample from seed ``args[0]`` and class ``args[1]``."""
    seed, label, fonts, latin_words = args
    rng = np.random.default_rng([seed, label])
    script = SCRIPTS[label]
    text = _text(script, rng, latin_words)
    path = fonts[script][int(rng.integers(len(fonts[script])))]
    font = _font(path, int(rng.integers(12, 22)) * 2)
    x0, y0, x1, y1 = font.getbbox(text)
    pad = int(rng.integers(1, 10))
    img = Image.new("L", (max(4, x1 - x0 + 2 * pad), max(4, y1 - y0 + 2 * pad)), 255)
    ImageDraw.Draw(img).text((pad - x0, pad - y0), text, font=font, fill=int(rng.integers(0, 90)))
    rgb = np.repeat(np.asarray(img)[..., None], 3, axis=2)
    if rng.random() < 0.4:
        rgb = D.on_background(rgb, rng, ink=tuple(int(v) for v in rng.integers(0, 160, 3)) if rng.random() < 0.3
                              else None)
    h = int(rng.integers(12, 40))
    rgb = np.asarray(Image.fromarray(rgb).resize((max(4, round(rgb.shape[1] * h / rgb.shape[0])), h)))
    rgb = D.degrade(rgb, rng, ("clean", "scan", "photo", "fax")[int(rng.integers(4))], geometric=True)
    if rng.random() < 0.2:
        rgb = 255 - rgb
    return prepare(rgb), label


def _render_set(n: int, seed: int, fonts: dict[str, list[str]], words: list[str], processes: int):
    labels = [i % len(SCRIPTS) for i in range(n)]
    labels = [lab if fonts[SCRIPTS[lab]] else 0 for lab in labels]
    jobs = [(seed * 10**7 + i, lab, fonts, words) for i, lab in enumerate(labels)]
    with ProcessPoolExecutor(processes) as pool:
        out = list(pool.map(render_sample, jobs, chunksize=256))
    x = torch.from_numpy(np.stack([a for a, _ in out]))[:, None]
    return x, torch.tensor([b for _, b in out])


def train(fonts_dirs: list[str], words_dir: str, out: Path, *, samples: int = 40_000, epochs: int = 6,
          processes: int = 2, seed: int = 0) -> dict[str, float]:
    from vision.training.synth.corpus import load_word_lists

    torch.manual_seed(seed)
    fonts = _fonts(fonts_dirs)
    print({k: len(v) for k, v in fonts.items()}, flush=True)
    words = [w for ws in load_word_lists(words_dir).values() for w in ws[::7]]
    t0 = time.perf_counter()
    cache = out.with_suffix(f".{samples}.{seed}.npz")  # the rendered sets, kept for a re-run
    if cache.exists():
        data = np.load(cache)
        x, y, xv, yv = (torch.from_numpy(data[k]) for k in ("x", "y", "xv", "yv"))
    else:
        x, y = _render_set(samples, seed + 1, fonts, words, processes)
        xv, yv = _render_set(samples // 10, seed + 2, fonts, words, processes)
        out.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, x=x.numpy().astype(np.float16), y=y.numpy(), xv=xv.numpy().astype(np.float16), yv=yv.numpy())
    x, xv = x.float(), xv.float()
    print(f"rendered {len(x) + len(xv)} samples in {time.perf_counter() - t0:.0f} s", flush=True)
    model = ScriptCNN()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    steps = epochs * (len(x) // 128)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(x))
        for i in range(0, len(x) - 127, 128):
            idx = perm[i:i + 128]
            xb = x[idx]
            shift = int(torch.randint(0, 24, ()))  # words start anywhere in the window
            xb = torch.cat([xb[..., shift:], torch.ones_like(xb[..., :shift])], dim=-1)
            loss = torch.nn.functional.cross_entropy(model(xb), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        model.eval()
        with torch.no_grad():
            acc = float((model(xv).argmax(1) == yv).float().mean())
        print(f"epoch {epoch + 1}: loss {loss.item():.3f} val acc {acc:.4f} ({time.perf_counter() - t0:.0f} s)",
              flush=True)
    from safetensors.torch import save_file

    out.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.half() if v.is_floating_point() else v for k, v in model.state_dict().items()}, str(out),
              metadata={"classes": ",".join(SCRIPTS), "samples": str(len(x)), "epochs": str(epochs),
                        "val_acc": f"{acc:.4f}", "trainer": "vision.training.script_classifier"})
    return {"val_acc": acc}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.training.script_classifier", description=__doc__)
    p.add_argument("--fonts", nargs="+", required=True)
    p.add_argument("--words", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--samples", type=int, default=40_000)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--processes", type=int, default=2)
    a = p.parse_args(argv)
    train(a.fonts, a.words, Path(a.out), samples=a.samples, epochs=a.epochs, processes=a.processes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
