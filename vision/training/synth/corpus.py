"""Text for synthetic word crops: real dictionary words plus generated numbers, dates, prices, codes...

The mix is weighted toward what forms and receipts hold (upper case, digits, punctuation at word edges,
short function words) while still covering every vocabulary character. Everything is drawn from a
``np.random.Generator``, so a seed fixes the text stream. Word lists are plain, ``.gz`` or ``.xz`` files, one
word per line, named by language (``english.gz``...); :func:`prepare_word_lists` makes a compact carried copy
of the Debian lists.
"""

from __future__ import annotations

import gzip
import lzma
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np

from vision.models.recognition.vocab import CHECKBOX_CHECKED, CHECKBOX_EMPTY, VOCAB, normalize_text

__all__ = ["COMMON_FOREIGN", "COMMON_WORDS", "FORM_WORDS", "Corpus", "TextSampler", "load_word_lists", "prepare_word_lists",
           "short_token"]

# The most frequent English words (function words dominate real running text; dictionaries under-sample them).
COMMON_WORDS = ["the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on", "not", "he", "I", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "they", "you", "were", "her", "she", "there", "been", "one", "all", "we", "their", "has", "would", "when", "if", "so", "no", "will", "more", "can", "its", "who", "may", "any", "other", "some", "these", "than", "into", "two", "our", "only", "also", "do", "new", "after", "up", "out", "what", "time", "about", "them", "me", "my", "made", "first", "per", "each", "should", "such", "must", "shall", "under", "over", "both", "through", "between", "before", "where", "most", "well", "very", "same", "year", "please", "see", "re", "cc", "enclosed", "attached", "above", "below", "following", "subject", "dear", "sincerely", "yours", "regards", "thank", "report", "study", "data", "test", "results", "sample", "product", "brand", "market", "sales", "program", "plan", "review", "approved", "date"]

# Words typical of forms, letters, invoices and receipts (mostly written in upper case there).
FORM_WORDS = ["NAME", "DATE", "ADDRESS", "CITY", "STATE", "ZIP", "PHONE", "FAX", "TEL", "EMAIL", "TOTAL", "SUBTOTAL", "TAX", "QTY", "AMOUNT", "PRICE", "UNIT", "ITEM", "NO", "DESCRIPTION", "INVOICE", "RECEIPT", "CASH", "CHANGE", "CARD", "VISA", "BALANCE", "DUE", "PAID", "SIGNATURE", "TITLE", "DEPT", "COMPANY", "FROM", "TO", "SUBJECT", "RE", "CC", "MEMO", "REPORT", "REQUEST", "APPROVED", "BY", "CODE", "REF", "ACCOUNT", "NUMBER", "TYPE", "STATUS", "COMMENTS", "REMARKS", "PAGE", "OF", "YES", "NA", "DISCOUNT", "GST", "SST", "VAT", "RM", "USD", "TOTAL:", "DATE:", "NAME:", "TO:", "FROM:", "RE:", "FAX:", "TEL:", "NO.:", "Inc.", "Co.", "Ltd.", "Corp.", "Bhd.", "Sdn.", "Dr.", "Mr.", "Mrs.", "Ms.", "Jr.", "St.", "Ave.", "Rd.", "P.O.", "Box", "Attn:", "Dept.", "Tel.", "Fax:", "Ref.", "Qty", "Amt", "Pcs", "EA", "KG", "PCS"]

# Frequent short words of the other Latin-script languages (their word lists carry no frequencies).
COMMON_FOREIGN = ("der", "die", "das", "und", "für", "über", "mit", "ist", "nicht", "auf", "zu", "Straße", "größe",
                  "le", "la", "les", "et", "à", "où", "été", "du", "des", "être", "très", "déjà", "français",
                  "il", "di", "che", "è", "più", "perché", "città", "della", "el", "los", "las", "y", "está", "año",
                  "también", "más", "así", "o", "não", "são", "à", "ção", "você", "também", "het", "een", "voor",
                  "op", "ook", "się", "że", "jest", "nie", "w", "na", "z", "być", "już", "a", "je", "v", "se", "na",
                  "že", "při", "až", "také", "byl", "ktorý", "ako", "och", "att", "på", "är", "för", "år", "og",
                  "på", "af", "til", "er", "ikke", "és", "hogy", "nem", "az", "și", "în", "că", "pe", "și", "cu")
_SUFFIX = (":", ".", ",", ";", ")", "'s", "?", "!", "-", "/", "%", ".)", "),", ").", '"', "”", "’", "*")
_SUFFIX_P = np.array([22, 22, 16, 3, 8, 3, 2, 1, 3, 2, 2, 1, 2, 2, 2, 1, 1, 1], float)
_PREFIX = ("(", '"', "“", "'", "‘", "#", "$", "*", "-", "«", "[", "/")
_PREFIX_P = np.array([30, 12, 5, 5, 2, 8, 6, 4, 4, 1, 2, 2], float)
_PUNCT_RUNS = (":", "-", "&", "%", "/", "*", "...", "--", "(", ")", "#", '"', "'", "x", "X", ".", ",", "+",
               "=", "$", "@", "!", "?", ";", "_", "__", "___", "–", "—", "§", "°", "±", "×", "÷", "€", "£", "¥",
               "«", "»", "“", "”", "‘", "’", "[", "]", "{", "}", "<", ">", "|", "\\", "^", "~", "`")
# Forms and tables are full of one- and two-character boxes: units, currency and bullet signs, row numbers,
# abbreviations. The word mix draws them rarely, so `short_token` draws them on their own (`p_short`).
_SHORT_SIGNS = "$%#*-.,:;/()&@+=<>!?'\"_~§°×€£"
_SHORT_WORDS = ("mm", "cm", "km", "kg", "mg", "ml", "lb", "lbs", "oz", "ft", "in", "yd", "g", "m", "%",
                "No", "Nr", "Dr", "Mr", "Ms", "Jr", "Sr", "St", "AM", "PM", "OK", "ID", "PO", "NA", "N/A",
                "vs", "cc", "Co", "Inc", "II", "III", "IV", "VI", "ea", "pc", "pcs", "qt", "hr", "min", "sec",
                "wk", "yr", "mo", "oz.", "lb.", "an", "as", "at", "be", "by", "do", "go", "he", "if", "is",
                "it", "me", "my", "of", "on", "or", "so", "to", "up", "us", "we")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
_TLDS = ("com", "org", "net", "edu", "gov", "de", "fr", "co.uk", "io", "my", "eu")


def _read_lines(path: Path) -> list[str]:
    opener: Callable = gzip.open if path.suffix == ".gz" else lzma.open if path.suffix == ".xz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # Debian's bokmaal list is ISO-8859-1
        text = raw.decode("latin-1")
    return [w for w in _normalize_lines(text) if w and " " not in w]


def _normalize_lines(text: str) -> list[str]:
    """``normalize_text(line.strip())`` for every line, about 10x faster on already-composed text.

    ``normalize_text`` composes (NFC), then folds or drops each character on its own. NFC text splits into
    NFC lines (a line break composes with nothing) whose characters are each their own NFC form, so one
    ``str.translate`` table of per-character results gives the same strings; other text takes the slow path.
    """
    lines = text.splitlines()
    if not unicodedata.is_normalized("NFC", text):
        return [normalize_text(line.strip()) for line in lines]
    table = {ord(c): normalize_text(c) for c in set(text)}
    return [line.strip().translate(table) for line in lines]


def load_word_lists(folder: str | Path) -> dict[str, list[str]]:
    """Language name (file stem) -> words, for every file in ``folder``; sorted by name for determinism."""
    out = {}
    for path in sorted(Path(folder).iterdir()):
        if path.is_file() and not path.name.startswith("."):
            name = path.name.split(".")[0]
            out[name] = out.get(name, []) + _read_lines(path)
    return out


def prepare_word_lists(src: str | Path, dst: str | Path, *, max_per_list: int = 60_000, seed: int = 0) -> int:
    """Copy the word lists in ``src`` to ``dst`` as ``NAME.gz``, at most ``max_per_list`` words each.

    Possessives (``'s``) are dropped (the sampler adds them); returns the number of words written.
    """
    rng = np.random.default_rng(seed)
    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    total = 0
    for name, words in load_word_lists(src).items():
        words = sorted({w for w in words if not w.endswith("'s") and len(w) <= 24})
        if len(words) > max_per_list:
            words = sorted(rng.choice(words, max_per_list, replace=False).tolist())
        with gzip.open(dst / f"{name}.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(words))
        total += len(words)
    return total


class Corpus:
    """Word lists: ``english`` (american + british) and the other languages (accented words)."""

    def __init__(self, lists: dict[str, Sequence[str]]) -> None:
        english = [w for k, v in lists.items() if "english" in k for w in v]
        self.english = sorted(set(english)) or list(COMMON_WORDS)
        self.foreign = {k: list(v) for k, v in sorted(lists.items()) if "english" not in k and v}
        self.foreign_names = sorted(self.foreign)

    @classmethod
    def from_dir(cls, folder: str | Path | None) -> Corpus:
        """Load from a folder of lists (or only the built-in common/form words when ``None``)."""
        return cls(load_word_lists(folder) if folder is not None and Path(folder).is_dir() else {})


def _pick(rng: np.random.Generator, seq: Sequence[str]) -> str:
    return seq[int(rng.integers(len(seq)))]


def _choice(rng: np.random.Generator, cum: np.ndarray) -> int:
    """Index drawn with probabilities given as a cumulative sum (faster than ``rng.choice(p=...)``)."""
    return min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(cum) - 1)


def _digits(rng: np.random.Generator, n: int) -> str:
    return "".join(str(d) for d in rng.integers(0, 10, n))


class TextSampler:
    """Draws one text per call from a weighted mix of generators (see :attr:`WEIGHTS`)."""

    WEIGHTS: ClassVar[dict[str, float]] = {"word": 0.37, "common": 0.10, "form": 0.06, "number": 0.15, "date": 0.05, "money": 0.04,
               "code": 0.07, "email_url": 0.02, "punct": 0.03, "phrase": 0.03, "random": 0.04, "char": 0.025,
               "checkbox": 0.015, "enumeration": 0.0}

    def __init__(self, corpus: Corpus, *, foreign: float = 0.15, weights: dict[str, float] | None = None) -> None:
        """``foreign``: share of dictionary words drawn from the non-English lists (multilingual text: 0.8);
        ``weights`` replaces entries of :attr:`WEIGHTS` (e.g. more words, fewer codes)."""
        self.corpus, self.foreign = corpus, foreign
        mix = {**self.WEIGHTS, **(weights or {})}
        self.kinds = [k for k in mix if mix[k] > 0]
        self.cum = np.cumsum([mix[k] for k in self.kinds])
        self.suffix_cum, self.prefix_cum = np.cumsum(_SUFFIX_P), np.cumsum(_PREFIX_P)

    def __call__(self, rng: np.random.Generator) -> str:
        kind = self.kinds[_choice(rng, self.cum)]
        text = getattr(self, f"_{kind}")(rng)
        return normalize_text(text) or "a"

    # -- generators ------------------------------------------------------------------------------------
    def _case(self, rng: np.random.Generator, word: str) -> str:
        r = rng.random()
        if r < 0.33:
            return word.upper()
        if r < 0.55:
            return word[:1].upper() + word[1:]
        if r < 0.58:
            return word.lower().swapcase() if word.islower() else word
        return word

    def _edges(self, rng: np.random.Generator, word: str) -> str:
        if rng.random() < 0.35:
            word += _SUFFIX[_choice(rng, self.suffix_cum)]
        if rng.random() < 0.08:
            pre = _PREFIX[_choice(rng, self.prefix_cum)]
            word = pre + word + (")" if pre == "(" and rng.random() < 0.6 else "")
        return word

    def _dict_word(self, rng: np.random.Generator) -> str:
        c = self.corpus
        if c.foreign_names and rng.random() < self.foreign:
            if self.foreign > 0.5 and rng.random() < 0.15:
                return _pick(rng, COMMON_FOREIGN)
            return _pick(rng, c.foreign[_pick(rng, c.foreign_names)])
        for _ in range(3):  # favour short words: real text is mostly 2-8 letters long
            w = _pick(rng, c.english)
            if len(w) <= 8 or rng.random() < 0.35:
                return w
        return w

    def _word(self, rng: np.random.Generator) -> str:
        return self._edges(rng, self._case(rng, self._dict_word(rng)))

    def _common(self, rng: np.random.Generator) -> str:
        return self._edges(rng, self._case(rng, _pick(rng, COMMON_WORDS)))

    def _form(self, rng: np.random.Generator) -> str:
        w = _pick(rng, FORM_WORDS)
        return w.title() if rng.random() < 0.2 else w

    def _number(self, rng: np.random.Generator) -> str:
        r = rng.random()
        n = int(rng.integers(1, 8))
        s = _digits(rng, n).lstrip("0") or "0" if rng.random() < 0.8 else _digits(rng, n)
        if r < 0.35:
            return s
        if r < 0.5:
            return f"{int(s):,}" if rng.random() < 0.7 else f"{int(s):,}".replace(",", ".")
        if r < 0.65:
            return f"{s}.{_digits(rng, int(rng.integers(1, 4)))}"
        if r < 0.72:
            return f"{s[:3]}%"
        if r < 0.78:
            return f"({s[:4]})" if rng.random() < 0.5 else f"-{s[:4]}"
        if r < 0.84:
            return f"{s[:2]}/{_digits(rng, int(rng.integers(1, 3)))}"
        if r < 0.9:
            return f"{s[:3]}-{_digits(rng, int(rng.integers(1, 5)))}"
        if r < 0.95:
            return f"#{s}" if rng.random() < 0.5 else f"No.{s[:4]}"
        return _digits(rng, int(rng.integers(7, 13)))  # long ids (document numbers, barcodes)

    def _enumeration(self, rng: np.random.Generator) -> str:
        """Numbered items and numbers ending a clause, as lists, catalogues and legal texts print them:
        ``128.``, ``12,``, ``3)``, ``(4)``, ``b)``, ``IV.``, ``2.1.``, ``12:``."""
        n = str(int(np.exp(rng.uniform(0, np.log(2000)))))
        r = rng.random()
        if r < 0.45:
            return f"{n}."
        if r < 0.6:
            return f"{n},"
        if r < 0.68:
            return f"{n})"
        if r < 0.74:
            return f"({n})"
        if r < 0.8:
            return f"{n}:" if rng.random() < 0.6 else f"{n};"
        if r < 0.87:
            letter = _pick(rng, "abcdefghijklmnopqrstuvwxyz")
            return f"{letter})" if rng.random() < 0.6 else f"{letter}."
        if r < 0.93:
            roman = _pick(rng, ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XX"))
            return f"{roman}." if rng.random() < 0.7 else roman.lower() + ")"
        return f"{n[:2]}.{int(rng.integers(1, 20))}."

    def _date(self, rng: np.random.Generator) -> str:
        d, m, y = int(rng.integers(1, 32)), int(rng.integers(1, 13)), int(rng.integers(1950, 2031))
        yy = y % 100
        forms = [f"{m}/{d}/{yy:02d}", f"{m:02d}/{d:02d}/{y}", f"{d:02d}.{m:02d}.{y}", f"{d}-{m}-{yy:02d}",
                 f"{y}-{m:02d}-{d:02d}", str(y), f"{_MONTHS[m - 1][:3]}.", _MONTHS[m - 1], f"{d},",
                 f"{int(rng.integers(0, 24)):02d}:{int(rng.integers(0, 60)):02d}",
                 f"{int(rng.integers(1, 13))}:{int(rng.integers(0, 60)):02d}{_pick(rng, ['AM', 'PM', 'am', 'pm'])}",
                 f"{d:02d}/{m:02d}/{y}", f"{y}", f"'{yy:02d}"]
        s = _pick(rng, forms)
        return s.upper() if rng.random() < 0.2 else s

    def _money(self, rng: np.random.Generator) -> str:
        amount = f"{int(rng.integers(0, 10 ** int(rng.integers(1, 6)))):,}.{_digits(rng, 2)}"
        cur = _pick(rng, ["$", "$", "$", "€", "£", "¥", "RM", ""])
        if cur == "€" and rng.random() < 0.5:
            return amount.replace(",", " ").replace(".", ",") + "€"
        return cur + amount

    def _code(self, rng: np.random.Generator) -> str:
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        L = lambda k: "".join(_pick(rng, letters) for _ in range(k))
        forms = [f"{L(2)}-{_digits(rng, 4)}", f"{L(1)}{_digits(rng, 3)}{L(1)}", f"{_digits(rng, 3)}-{_digits(rng, 4)}",
                 f"({_digits(rng, 3)})", f"{L(3)}{_digits(rng, int(rng.integers(2, 7)))}", f"{L(1)}/{L(1)}",
                 f"{L(1)}&{L(1)}", f"{L(2)}.", f"{_digits(rng, 5)}-{_digits(rng, 4)}", L(int(rng.integers(2, 5))),
                 f"{L(1)}.{L(1)}.", f"{_digits(rng, 2)}{L(2)}{_digits(rng, 2)}", "N/A", "R&D", "P.O.", "U.S.A.",
                 f"{L(1)}-{_digits(rng, 2)}", f"{_digits(rng, 4)}/{_digits(rng, 2)}"]
        return _pick(rng, forms)

    def _email_url(self, rng: np.random.Generator) -> str:
        user = self._dict_word(rng).lower()
        host = self._dict_word(rng).lower()
        tld = _pick(rng, _TLDS)
        r = rng.random()
        if r < 0.4:
            return f"{user}{_pick(rng, ['.', '_', ''])}{_digits(rng, int(rng.integers(0, 3)))}@{host}.{tld}"
        if r < 0.7:
            return f"www.{host}.{tld}"
        return f"{_pick(rng, ['http', 'https'])}://{host}.{tld}/{user}"

    def _punct(self, rng: np.random.Generator) -> str:
        return _pick(rng, _PUNCT_RUNS)

    def _phrase(self, rng: np.random.Generator) -> str:
        n = int(rng.integers(2, 4))
        words = [self._case(rng, self._dict_word(rng) if rng.random() < 0.6 else _pick(rng, COMMON_WORDS))
                 for _ in range(n)]
        return " ".join(words)

    def _random(self, rng: np.random.Generator) -> str:
        pool = VOCAB[1:-2]  # no space, no check boxes
        return "".join(_pick(rng, pool) for _ in range(int(rng.integers(1, 9))))

    def _char(self, rng: np.random.Generator) -> str:
        return _pick(rng, "AaIiXxOo0123456789&%-/:#*()" + "ABCDEFGHJKLMNPQRSTUVWYZ")

    def _checkbox(self, rng: np.random.Generator) -> str:
        return CHECKBOX_CHECKED if rng.random() < 0.45 else CHECKBOX_EMPTY


def short_token(rng: np.random.Generator) -> str:
    """One or two characters (a few of three or four) as forms and tables print them alone: a sign
    (``$``, ``-``, ``*``), a letter or digit, a unit or abbreviation (``mm``, ``No``), or a short number
    with its sign (``5%``, ``$5``, ``(3)``, ``.08``)."""
    r = rng.random()
    if r < 0.3:
        return _pick(rng, _SHORT_SIGNS)
    if r < 0.5:
        return _pick(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    if r < 0.75:
        word = _pick(rng, _SHORT_WORDS)
        c = rng.random()
        word = word.upper() if c < 0.25 else word.title() if c < 0.4 else word
        return word + "." if rng.random() < 0.1 and not word.endswith(".") else word
    digits = _digits(rng, int(rng.integers(1, 3)))
    fmt = _pick(rng, ("{}", "{}", "{}.", "{}%", "${}", "#{}", "({})", "{})", ".{}", "-{}", "+{}", "x{}",
                      "{}*", "{}-", "*{}"))
    return fmt.format(digits)
